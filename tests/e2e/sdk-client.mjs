// SPDX-License-Identifier: Apache-2.0
// Drives `cmdwarden serve` with the MCP TypeScript SDK's Client over stdio
// and prints what it saw as one JSON object, for the bats tests to check.
//   node sdk-client.mjs CMDWARDEN [SERVE_ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [cmd, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: cmd, args: ["serve", ...args], stderr: "inherit" });
const client = new Client({ name: "cmdwarden-e2e", version: "1.0.0" });

await client.connect(transport);
const out = { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null };
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.allowed = await client.callTool({ name: "run_command", arguments: { command: "echo from-sdk; exit 2", sandboxId: "sdk" } });
out.denied = await client.callTool({ name: "write_file", arguments: { path: "/tmp/x" } });
try {
	await client.callTool({ name: "run_command", arguments: { command: "" } }).then((r) => { out.invalid = r; });
} catch (e) {
	out.invalid = { thrown: String(e) };
}
await client.ping();
out.pinged = true;
await client.close();
console.log(JSON.stringify(out));
