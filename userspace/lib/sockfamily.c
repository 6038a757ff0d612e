// SPDX-License-Identifier: Apache-2.0
/*
 * The names of <linux/socket.h>'s families and <linux/netlink.h>'s
 * protocols. Numbers are written out rather than taken from the headers,
 * so a build against older headers still knows every name.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "lib/sockfamily.h"
#include "lib/util.h"

#define FAMILIES(X)                                                       \
	X(0, AF_UNSPEC) X(1, AF_UNIX) X(2, AF_INET) X(3, AF_AX25)         \
	X(4, AF_IPX) X(5, AF_APPLETALK) X(6, AF_NETROM) X(7, AF_BRIDGE)   \
	X(8, AF_ATMPVC) X(9, AF_X25) X(10, AF_INET6) X(11, AF_ROSE)       \
	X(12, AF_DECnet) X(13, AF_NETBEUI) X(14, AF_SECURITY)             \
	X(15, AF_KEY) X(16, AF_NETLINK) X(17, AF_PACKET) X(18, AF_ASH)    \
	X(19, AF_ECONET) X(20, AF_ATMSVC) X(21, AF_RDS) X(22, AF_SNA)     \
	X(23, AF_IRDA) X(24, AF_PPPOX) X(25, AF_WANPIPE) X(26, AF_LLC)    \
	X(27, AF_IB) X(28, AF_MPLS) X(29, AF_CAN) X(30, AF_TIPC)          \
	X(31, AF_BLUETOOTH) X(32, AF_IUCV) X(33, AF_RXRPC) X(34, AF_ISDN) \
	X(35, AF_PHONET) X(36, AF_IEEE802154) X(37, AF_CAIF)              \
	X(38, AF_ALG) X(39, AF_NFC) X(40, AF_VSOCK) X(41, AF_KCM)         \
	X(42, AF_QIPCRTR) X(43, AF_SMC) X(44, AF_XDP) X(45, AF_MCTP)

#define NETLINK_PROTOS(X)                                                 \
	X(0, NETLINK_ROUTE) X(1, NETLINK_UNUSED) X(2, NETLINK_USERSOCK)   \
	X(3, NETLINK_FIREWALL) X(4, NETLINK_SOCK_DIAG)                    \
	X(5, NETLINK_NFLOG) X(6, NETLINK_XFRM) X(7, NETLINK_SELINUX)      \
	X(8, NETLINK_ISCSI) X(9, NETLINK_AUDIT)                           \
	X(10, NETLINK_FIB_LOOKUP) X(11, NETLINK_CONNECTOR)                \
	X(12, NETLINK_NETFILTER) X(13, NETLINK_IP6_FW)                    \
	X(14, NETLINK_DNRTMSG) X(15, NETLINK_KOBJECT_UEVENT)              \
	X(16, NETLINK_GENERIC) X(18, NETLINK_SCSITRANSPORT)               \
	X(19, NETLINK_ECRYPTFS) X(20, NETLINK_RDMA) X(21, NETLINK_CRYPTO) \
	X(22, NETLINK_SMC)

struct named {
	int nr;
	const char *name;
};

#define NAMED(nr, name) { nr, #name },
#define NAME_ONLY(nr, name) #name,

static const struct named families[] = { FAMILIES(NAMED) };
static const struct named netlink_protos[] = { NETLINK_PROTOS(NAMED) };

const char *const cw_sockfamily_names[] = { FAMILIES(NAME_ONLY) NULL };
const char *const cw_netlink_proto_names[] = { NETLINK_PROTOS(NAME_ONLY) NULL };

static const char *name_of(const struct named *t, size_t n, int nr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

static int nr_of(const struct named *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return t[i].nr;
	return -1;
}

const char *cw_sockfamily_name(int family)
{
	return name_of(families, CW_ARRAY_SIZE(families),
		       family);
}

const char *cw_netlink_proto_name(int protocol)
{
	return name_of(netlink_protos,
		       CW_ARRAY_SIZE(netlink_protos),
		       protocol);
}

int cw_sockfamily_by_name(const char *name)
{
	return nr_of(families, CW_ARRAY_SIZE(families), name);
}

int cw_netlink_proto_by_name(const char *name)
{
	return nr_of(netlink_protos,
		     CW_ARRAY_SIZE(netlink_protos), name);
}

int cw_sockfamily_parse(const char *entry, int *family, int *protocol)
{
	const char *colon = strchr(entry, ':');
	char fam[32];
	size_t len = colon ? (size_t)(colon - entry) : strlen(entry);

	if (len >= sizeof(fam))
		return -ENOENT;
	memcpy(fam, entry, len);
	fam[len] = '\0';
	*family = cw_sockfamily_by_name(fam);
	*protocol = -1;
	if (*family < 0)
		return -ENOENT;
	if (!colon)
		return 0;
	if (*family != 16 /* AF_NETLINK */)
		return -EINVAL;
	*protocol = cw_netlink_proto_by_name(colon + 1);
	return *protocol < 0 ? -EPROTONOSUPPORT : 0;
}
