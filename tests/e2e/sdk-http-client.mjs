// SPDX-License-Identifier: Apache-2.0
// Drives `cmdwarden serve --http` with the MCP TypeScript SDK's Client over
// StreamableHTTPClientTransport and prints what it saw as one JSON object,
// for the bats tests to check.
//   node sdk-http-client.mjs URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
	requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "cmdwarden-e2e-http", version: "1.0.0" });
const out = {};

try {
	await client.connect(transport);
} catch (e) {
	// A refused token: report what the client saw, for the test to check.
	console.log(JSON.stringify({ connectError: String(e), status: e.code ?? null }));
	process.exit(0);
}
out.server = client.getServerVersion();
out.protocol = transport.protocolVersion ?? null;
out.session = transport.sessionId ?? null;
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.allowed = await client.callTool({ name: "run_command", arguments: { command: "echo from-http; exit 3", sandboxId: "sdk-http" } });
out.denied = await client.callTool({ name: "write_file", arguments: { path: "/tmp/x" } });
await client.ping();
out.pinged = true;
await transport.terminateSession();
out.terminated = transport.sessionId === undefined;
await client.close();
console.log(JSON.stringify(out));
