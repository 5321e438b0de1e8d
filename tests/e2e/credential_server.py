#!/usr/bin/env python3
"""A stand-in for the servers behind the credential stores, on 127.0.0.1, for the e2e tests.

Usage: credential_server.py PORT_FILE LOG_FILE USER:PASSWORD

Answers, over plain HTTP on a free port (written to PORT_FILE once listening):
- the Kubernetes API as far as `kubectl get pods` needs it: version, discovery and an empty
  PodList in every namespace;
- a git repository's refs over the dumb HTTP protocol (GET /<name>.git/info/refs), only to a
  client that sends USER:PASSWORD as basic authentication; others get 401, so git asks for
  credentials.
Every request is appended to LOG_FILE as "METHOD PATH auth=yes|no", so a test sees which
requests reached the server and whether they carried the credentials.
"""
import base64
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE, CREDENTIALS = sys.argv[1], sys.argv[2], sys.argv[3]
EXPECTED = "Basic " + base64.b64encode(CREDENTIALS.encode()).decode()
HEAD = "0123456789abcdef0123456789abcdef01234567"

KUBE = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
         "verbs": ["get", "list"], "shortNames": ["po"]}]},
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, content_type, headers=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        authorized = self.headers.get("Authorization") == EXPECTED
        with open(LOG_FILE, "a") as log:
            log.write(f"GET {self.path} auth={'yes' if authorized else 'no'}\n")
        path = self.path.split("?", 1)[0]
        if path.endswith(".git/info/refs"):
            if not authorized:
                self.send(401, "credentials needed\n", "text/plain",
                          [("WWW-Authenticate", 'Basic realm="git"')])
            else:
                self.send(200, f"{HEAD}\trefs/heads/main\n", "text/plain")
        elif path in KUBE:
            self.send(200, json.dumps(KUBE[path]), "application/json")
        elif path.startswith("/api/v1/") and path.endswith("/pods"):
            self.send(200, json.dumps({"kind": "PodList", "apiVersion": "v1",
                                       "metadata": {"resourceVersion": "1"}, "items": []}),
                      "application/json")
        else:
            self.send(404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                       "reason": "NotFound", "code": 404}), "application/json")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
