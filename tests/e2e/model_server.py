#!/usr/bin/env python3
"""A scripted model API for the end-to-end tests.

    model_server.py serve SCRIPT PORT_FILE REQUESTS_FILE
        Serves on 127.0.0.1 at a free port (written to PORT_FILE once listening). Each POST
        takes the next turn of SCRIPT (a JSON list) and answers it in the OpenAI chat
        completions format, or in the Anthropic Messages format when the path ends in
        /messages. Every request body is appended to REQUESTS_FILE as one JSON line.
        GET .../models lists one model; with MODEL_SERVER_KEY in the environment, a request
        without that key (Authorization: Bearer or x-api-key) gets 401 with an error that
        quotes the key it got back, as hosted APIs do. Each GET is logged as
        {"path", "method": "GET", "key_matched"}.

    model_server.py tool-result REQUESTS_FILE N   the last tool result in request N (1-based)
    model_server.py tool-results REQUESTS_FILE N  all tool results in request N, apart
    model_server.py first-user REQUESTS_FILE N    the first user text in request N
    model_server.py last-user REQUESTS_FILE N     the last user text in request N
    model_server.py system REQUESTS_FILE N        the system prompt of request N
    model_server.py count REQUESTS_FILE           how many requests came
    model_server.py sizes REQUESTS_FILE           per POST: its tokens, its answer's status and
                                                  whether it was a summary request, a line each

SCRIPT is a list of turns, or {"turns": [...], "summaries": [...]}: a request without tools
(Caretz asking for a summary of an older conversation) takes the next of "summaries" instead,
and gets HTTP 500 when there is none left.

With MODEL_SERVER_CONTEXT=N the model has a context window of N tokens (a token being 4 bytes
of the request's system, messages and tools as JSON): a larger request gets HTTP 400 with the
error body OpenAI sends (context_length_exceeded, "maximum context length is N tokens") or, on
/messages, the one Anthropic sends ("prompt is too long: M tokens > N maximum"), and takes no
turn. Every streamed answer reports the request's tokens as usage (OpenAI: in a last chunk when
stream_options.include_usage asks for it; Anthropic: in message_start).

A turn is an object with any of:
    "text": the answer's text, streamed in small pieces
    "tool_calls": [{"name": ..., "arguments": object or raw string}]
    "status", "body", "retry_after": answer with that HTTP status instead of a stream
    "raw": answer 200 with this text as an HTML page instead of an event stream
    "cut": stop in the middle of the first tool call's arguments and drop the connection
    "hang": seconds to wait after the text before finishing (to test Ctrl-C mid-stream)
"""
import http.server
import json
import os
import sys
import threading
import time


def pieces(text, size=7):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def arguments_text(call):
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


def request_tokens(body):
    parts = [body.get("system", ""), body.get("messages", []), body.get("tools", [])]
    return (len(json.dumps(parts)) + 3) // 4


def openai_events(turn, usage=None):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "model": "e2e",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(turn.get("text", "")):
        if piece:
            yield chunk({"content": piece})
    if turn.get("hang"):
        yield ("hang", turn["hang"])
    for i, call in enumerate(turn.get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": i, "id": "call_%d" % i, "type": "function",
                                     "function": {"name": call["name"], "arguments": ""}}]})
        args = arguments_text(call)
        if turn.get("cut"):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args[:5]}}]})
            yield ("cut", 0)
        for piece in pieces(args, 5):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if turn.get("tool_calls") else "stop")
    if usage is not None:
        yield {"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "model": "e2e",
               "choices": [], "usage": {"prompt_tokens": usage, "completion_tokens": 10,
                                        "total_tokens": usage + 10}}
    yield "[DONE]"


def anthropic_events(turn, usage=1):
    yield {"type": "message_start",
           "message": {"id": "msg_e2e", "type": "message", "role": "assistant", "content": [],
                       "model": "e2e", "stop_reason": None,
                       "usage": {"input_tokens": usage, "output_tokens": 1}}}
    yield {"type": "ping"}
    index = 0
    if turn.get("text"):
        yield {"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}}
        for piece in pieces(turn["text"]):
            yield {"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": piece}}
        yield {"type": "content_block_stop", "index": 0}
        index = 1
    if turn.get("hang"):
        yield ("hang", turn["hang"])
    for call in turn.get("tool_calls", []):
        yield {"type": "content_block_start", "index": index,
               "content_block": {"type": "tool_use", "id": "toolu_%d" % index,
                                 "name": call["name"], "input": {}}}
        args = arguments_text(call)
        if turn.get("cut"):
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": args[:5]}}
            yield ("cut", 0)
        for piece in pieces(args, 5):
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    stop = "tool_use" if turn.get("tool_calls") else "end_turn"
    yield {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}
    yield {"type": "message_stop"}


def overflow_body(anthropic, tokens, window):
    if anthropic:
        return {"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: %d tokens > %d maximum" % (tokens, window)}}
    return {"error": {
        "message": "This model's maximum context length is %d tokens. However, your messages "
                   "resulted in %d tokens. Please reduce the length of the messages."
                   % (window, tokens),
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        sent = self.headers.get("x-api-key") or self.headers.get("Authorization", "").removeprefix("Bearer ")
        expected = os.environ.get("MODEL_SERVER_KEY")
        matched = expected is None or sent == expected
        with server.lock:
            with open(server.requests_path, "a") as log:
                log.write(json.dumps({"path": self.path, "method": "GET",
                                      "key_matched": matched}) + "\n")
        if not self.path.endswith("/models"):
            self.send_error_turn({"status": 404, "body": {"error": {"message": "no such path"}}})
        elif not matched:
            self.send_error_turn({"status": 401, "body": {"error": {
                "message": "Incorrect API key provided: %s" % sent}}})
        else:
            self.send_error_turn({"status": 200, "body": {"object": "list", "data": [
                {"id": "e2e-model", "object": "model"}]}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        server = self.server
        anthropic = self.path.endswith("/messages")
        tokens = request_tokens(body)
        summary = not body.get("tools")
        window = int(os.environ.get("MODEL_SERVER_CONTEXT", "0"))
        with server.lock:
            if window and tokens > window:
                turn = {"status": 400, "body": overflow_body(anthropic, tokens, window)}
            elif summary:
                turn = server.summaries.pop(0) if server.summaries else {
                    "status": 500, "body": {"error": {"message": "the test script has no summary"}}}
            else:
                turn = server.turns.pop(0) if server.turns else {
                    "status": 500, "body": {"error": {"message": "the test script has no more turns"}}}
            with open(server.requests_path, "a") as log:
                log.write(json.dumps({"path": self.path, "body": body, "tokens": tokens,
                                      "summary": summary, "status": turn.get("status", 200),
                                      "time": time.time()}) + "\n")
        if "status" in turn:
            self.send_error_turn(turn)
        elif "raw" in turn:
            self.send_page(turn["raw"])
        elif anthropic:
            self.stream(turn, anthropic_events(turn, tokens), anthropic=True)
        else:
            wants_usage = (body.get("stream_options") or {}).get("include_usage")
            self.stream(turn, openai_events(turn, tokens if wants_usage else None),
                        anthropic=False)

    def send_error_turn(self, turn):
        data = json.dumps(turn.get("body", {"error": {"message": "scripted failure"}})).encode()
        self.send_response(turn["status"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if "retry_after" in turn:
            self.send_header("Retry-After", str(turn["retry_after"]))
        self.end_headers()
        self.wfile.write(data)

    def send_page(self, text):
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, turn, events, anthropic):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for event in events:
                if isinstance(event, tuple) and event[0] == "hang":
                    time.sleep(event[1])
                    continue
                if isinstance(event, tuple) and event[0] == "cut":
                    self.close_connection = True
                    return
                if event == "[DONE]":
                    payload = b"data: [DONE]\n\n"
                elif anthropic:
                    payload = ("event: %s\ndata: %s\n\n" % (event["type"], json.dumps(event))).encode()
                else:
                    payload = ("data: %s\n\n" % json.dumps(event)).encode()
                self.chunk(payload)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def serve(script_path, port_path, requests_path):
    with open(script_path) as f:
        script = json.load(f)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.turns = script["turns"] if isinstance(script, dict) else script
    server.summaries = script.get("summaries", []) if isinstance(script, dict) else []
    server.lock = threading.Lock()
    server.requests_path = requests_path
    open(requests_path, "w").close()
    with open(port_path + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_path + ".tmp", port_path)
    server.serve_forever()


def requests(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def tool_results(request):
    results = []
    for message in request["body"].get("messages", []):
        if message.get("role") == "tool":
            results.append(message.get("content", ""))
        elif message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    results.append(text_of(block.get("content", "")))
    return results


def user_texts(request):
    texts = []
    for message in request["body"].get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(b["text"] for b in content if b.get("type") == "text")
    return texts


def system_of(request):
    body = request["body"]
    if "system" in body:
        return text_of(body["system"])
    return "".join(m["content"] for m in body.get("messages", []) if m.get("role") == "system")


def main(argv):
    command = argv[1]
    if command == "serve":
        serve(*argv[2:5])
        return 0
    all_requests = requests(argv[2])
    if command == "count":
        print(len(all_requests))
        return 0
    if command == "sizes":
        for r in all_requests:
            if "body" in r:
                print(r.get("tokens"), r.get("status"), "summary" if r.get("summary") else "turn")
        return 0
    request = all_requests[int(argv[3]) - 1]
    if command == "tool-result":
        results = tool_results(request)
        sys.stdout.write(results[-1] if results else "")
    elif command == "tool-results":
        sys.stdout.write("\n---\n".join(tool_results(request)))
    elif command == "first-user":
        sys.stdout.write(user_texts(request)[0])
    elif command == "last-user":
        sys.stdout.write(user_texts(request)[-1])
    elif command == "system":
        sys.stdout.write(system_of(request))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
