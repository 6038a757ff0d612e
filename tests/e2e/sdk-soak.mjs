// SPDX-License-Identifier: Apache-2.0
// Load for `cmdwarden serve --http`: CLIENTS SDK clients at once (each its
// own session over StreamableHTTPClientTransport), each making CALLS
// run_command calls one after another, clients alternating between the
// tokens given. Prints one JSON object: per grant how many calls ran and
// how many were rate limited, and every call that got anything else (a
// thrown error, an unexpected result), for the bats test to check.
//   node sdk-soak.mjs URL CLIENTS CALLS NAME=TOKEN...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clientsArg, callsArg, ...grantArgs] = process.argv.slice(2);
const clients = Number(clientsArg);
const calls = Number(callsArg);
const grants = grantArgs.map((g) => {
	const i = g.indexOf("=");
	return { name: g.slice(0, i), token: g.slice(i + 1) };
});
if (!url || !(clients > 0) || !(calls > 0) || grants.length === 0) {
	console.error("usage: node sdk-soak.mjs URL CLIENTS CALLS NAME=TOKEN...");
	process.exit(2);
}

const counts = Object.fromEntries(grants.map((g) => [g.name, { ran: 0, limited: 0 }]));
const failures = [];
const fail = (what) => {
	if (failures.length < 20) failures.push(what);
	else failures.length++;
};

async function client(n) {
	const grant = grants[n % grants.length];
	const transport = new StreamableHTTPClientTransport(new URL(url), {
		requestInit: { headers: { Authorization: `Bearer ${grant.token}` } },
	});
	const c = new Client({ name: `soak-${n}`, version: "1.0.0" });
	try {
		await c.connect(transport);
	} catch (e) {
		fail(`client ${n}: connect: ${e}`);
		return;
	}
	for (let i = 0; i < calls; i++) {
		const want = `c${n}-${i}`;
		try {
			const r = await c.callTool({ name: "run_command", arguments: { command: `echo ${want}` } });
			const text = r.content?.[0]?.text ?? "";
			if (!r.isError && r.structuredContent?.stdout === `${want}\n` && r.structuredContent?.exit_code === 0) {
				counts[grant.name].ran++;
			} else if (r.isError && text.startsWith('[POLICY DENIED] rate limit "soak"')) {
				counts[grant.name].limited++;
			} else {
				fail(`client ${n} call ${i}: unexpected result ${JSON.stringify(r).slice(0, 300)}`);
			}
		} catch (e) {
			fail(`client ${n} call ${i}: ${e}`);
		}
	}
	try {
		await transport.terminateSession();
		await c.close();
	} catch (e) {
		fail(`client ${n}: close: ${e}`);
	}
}

const t0 = Date.now();
await Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
console.log(JSON.stringify({ counts, failures, failed: failures.length, ms: Date.now() - t0 }));
