// SPDX-License-Identifier: Apache-2.0
// Drives `cmdwarden serve` with the MCP TypeScript SDK's Client over stdio
// (or over Streamable HTTP, see transportFor) through one scenario and prints what it saw as one JSON object, for the
// bats tests to check. Waits are for events, each bounded by a generous
// limit; nothing here measures speed.
//   node sdk-scenarios.mjs SCENARIO DIR CMDWARDEN [SERVE_ARGS...]
// DIR is a scratch directory the commands (run as the sandbox user) can
// write to.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [scenario, dir, cmd, ...args] = process.argv.slice(2);
const WAIT_MS = 30000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls cond() until it is true; false after WAIT_MS.
async function until(cond) {
	for (const end = Date.now() + WAIT_MS; Date.now() < end; await sleep(50))
		if (await cond()) return true;
	return false;
}

function alive(pid) {
	try {
		process.kill(pid, 0);
	} catch (e) {
		return e.code === "EPERM";
	}
	// A zombie no longer runs: it is gone for our purpose.
	try {
		return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
	} catch {
		return false;
	}
}

// A command's pids are those of its own pid namespace; it writes them as
// NS:PID (NS from readlink /proc/self/ns/pid), and this machine's pid is
// the process in that namespace whose innermost pid is PID.
function hostPid(ns, nsPid) {
	for (const d of readdirSync("/proc")) {
		if (!/^[0-9]+$/.test(d)) continue;
		try {
			if (readlinkSync(`/proc/${d}/ns/pid`) !== ns) continue;
			const m = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${d}/status`, "utf8"));
			if (m && Number(m[1].trim().split(/\s+/).pop()) === nsPid) return Number(d);
		} catch {
			// gone meanwhile
		}
	}
	return 0;
}

function pidsIn(file) {
	if (!existsSync(file)) return [];
	return readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map((w) => {
		const at = w.lastIndexOf(":");
		return at > 0 ? hostPid(w.slice(0, at), Number(w.slice(at + 1))) : Number(w);
	}).filter(Boolean);
}

// NS:PID of the last background process, for pidsIn
const lastPid = '"$(readlink /proc/self/ns/pid):$!"';

const run = (command, extra = {}) => ({ name: "run_command", arguments: { command, ...extra } });
const text = (r) => r.content?.[0]?.text ?? "";

// With CW_MCP_URL (and CW_MCP_TOKEN), the scenario talks to a running
// `serve --http` over Streamable HTTP instead of starting one over stdio.
function transportFor() {
	if (process.env.CW_MCP_URL)
		return new StreamableHTTPClientTransport(new URL(process.env.CW_MCP_URL), {
			requestInit: { headers: { Authorization: `Bearer ${process.env.CW_MCP_TOKEN}` } },
		});
	return new StdioClientTransport({ command: cmd, args: ["serve", ...args], stderr: "inherit" });
}

async function connect(capabilities = {}) {
	const transport = transportFor();
	const client = new Client({ name: "cmdwarden-e2e", version: "1.0.0" }, { capabilities });
	await client.connect(transport);
	return client;
}

const scenarios = {
	// A slow call and a fast one at once: the fast one is answered while
	// the slow one still runs.
	async concurrent() {
		const c = await connect();
		const order = [];
		const slow = c.callTool(run(`while [ ! -e ${dir}/go ]; do sleep 0.05; done; echo slow`)).then((r) => {
			order.push("slow");
			return r;
		});
		const fast = await c.callTool(run("echo fast"));
		order.push("fast");
		execFileSync("touch", [`${dir}/go`]);
		const s = await slow;
		await c.close();
		return { order, fast: fast.structuredContent, slow: s.structuredContent };
	},

	// A call cancelled by the client: its whole tree is killed, including
	// a process that left the process group; the session goes on.
	async cancel() {
		const c = await connect();
		const ac = new AbortController();
		const cmdline = `sleep 100 & echo ${lastPid} >> ${dir}/pids; setsid sleep 100 & echo ${lastPid} >> ${dir}/pids; wait`;
		const call = c.callTool(run(cmdline), undefined, { signal: ac.signal }).then(
			(r) => ({ answered: r }),
			(e) => ({ rejected: String(e) })
		);
		const started = await until(() => pidsIn(`${dir}/pids`).length === 2);
		const pids = pidsIn(`${dir}/pids`);
		const aliveBefore = pids.filter(alive);
		ac.abort("the test cancels it");
		const outcome = await call;
		const gone = await until(() => pids.every((p) => !alive(p)));
		const after = await c.callTool(run("echo after"));
		await c.close();
		return { started, pids, aliveBefore, outcome, gone, after: after.structuredContent };
	},

	// Progress notifications for a call that asked for them.
	async progress() {
		const c = await connect();
		const events = [];
		const r = await c.callTool(run("sleep 5; echo done"), undefined, {
			onprogress: (p) => events.push(p),
			timeout: WAIT_MS,
		});
		const quiet = await c.callTool(run("echo quiet"));
		await c.close();
		return { events, result: r.structuredContent, quiet: quiet.structuredContent };
	},

	// require_approval asked through elicitation: the first answer accepts,
	// the second declines.
	async elicit() {
		const c = await connect({ elicitation: {} });
		const asked = [];
		const answers = ["accept", "decline"];
		c.setRequestHandler(ElicitRequestSchema, async (req) => {
			asked.push(req.params.message);
			return { action: answers.shift() ?? "cancel" };
		});
		const accepted = await c.callTool(run("echo approved-ran"));
		const declined = await c.callTool(run(`touch ${dir}/declined-ran`));
		await c.close();
		return {
			asked,
			accepted: { isError: accepted.isError ?? false, text: text(accepted), sc: accepted.structuredContent },
			declined: { isError: declined.isError ?? false, text: text(declined) },
			declinedRan: existsSync(`${dir}/declined-ran`),
		};
	},

	// A background call: answered at launch, followed with command_status,
	// ended with command_kill; another ends by itself.
	async background() {
		const c = await connect();
		const bg = await c.callTool(run(`echo started; sleep 100 & echo ${lastPid} > ${dir}/child; wait`, { background: true, sandboxId: "sb1" }));
		const inv = bg.structuredContent?.invocation_id;
		const status = (id) => c.callTool({ name: "command_status", arguments: { invocation_id: id } });
		let running;
		const sawOutput = await until(async () => {
			running = await status(inv);
			// the pid written, not just the file created: the shell
			// opens it before echo writes to it
			return running.structuredContent?.stdout === "started\n" && pidsIn(`${dir}/child`).length === 1;
		});
		const child = pidsIn(`${dir}/child`)[0];
		const childAliveBefore = child ? alive(child) : false;
		const killed = await c.callTool({ name: "command_kill", arguments: { invocation_id: inv } });
		const childGone = await until(() => !alive(child));
		const mainGone = !alive(bg.structuredContent?.pid);
		const after = await status(inv);

		const bg2 = await c.callTool(run("echo bg-done; exit 3", { background: true }));
		let ended;
		await until(async () => {
			ended = await status(bg2.structuredContent?.invocation_id);
			return ended.structuredContent?.running === false;
		});
		const unknown = await status("inv-0000000000000000");
		await c.close();
		return {
			bg: { text: JSON.parse(text(bg)), sc: bg.structuredContent },
			sawOutput,
			running: running.structuredContent,
			childAliveBefore,
			killed: killed.structuredContent,
			childGone,
			mainGone,
			after: after.structuredContent,
			ended: ended.structuredContent,
			unknown: { isError: unknown.isError ?? false, text: text(unknown) },
		};
	},

	// max_concurrent 1: a background command holds the only slot, so a
	// second call is refused; once it is killed, the twin call runs.
	async maxconc() {
		const c = await connect();
		const bg = await c.callTool(run("sleep 100", { background: true }));
		const refused = await c.callTool(run("echo refused-ran"));
		await c.callTool({ name: "command_kill", arguments: { invocation_id: bg.structuredContent.invocation_id } });
		const twin = await c.callTool(run("echo twin-ran"));
		await c.close();
		return {
			refused: { isError: refused.isError ?? false, text: text(refused) },
			twin: { isError: twin.isError ?? false, sc: twin.structuredContent },
		};
	},
};

if (!scenarios[scenario]) {
	console.error(`unknown scenario "${scenario}"; expected one of ${Object.keys(scenarios).join(", ")}`);
	process.exit(2);
}
console.log(JSON.stringify(await scenarios[scenario]()));
