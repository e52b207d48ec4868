"""A real OTLP/HTTP receiver for the telemetry tests, built on the OpenTelemetry protocol's own
message classes (PyPI `opentelemetry-proto`): it listens on 127.0.0.1, accepts POST /v1/traces
and /v1/metrics with protobuf bodies (`ExportTraceServiceRequest`,
`ExportMetricsServiceRequest`), answers with the protocol's empty success response, and appends
one JSON line per export to the output file: {"path", "body_hex", "decoded"} (decoded with
protobuf's json_format, ids in hex). A body that does not parse is answered 400 and recorded
with "error".

Usage: otlp_receiver.py OUT_FILE   (prints the port it listens on, then serves until killed)
"""
import base64
import http.server
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

OUT = sys.argv[1]
KINDS = {
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
}


def hex_ids(v):
    """json_format writes bytes fields (trace and span ids) as base64: make them hex."""
    if isinstance(v, dict):
        return {k: (base64.b64decode(x).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(x, str)
                    else hex_ids(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [hex_ids(x) for x in v]
    return v


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = KINDS.get(self.path)
        record = {"path": self.path, "content_type": self.headers.get("Content-Type"), "body_hex": body.hex()}
        status, answer = 404, b""
        if kind:
            request, response = kind
            try:
                msg = request()
                msg.ParseFromString(body)
                record["decoded"] = hex_ids(json_format.MessageToDict(msg))
                status, answer = 200, response().SerializeToString()
            except Exception as e:  # noqa: BLE001 - a bad body is recorded, not fatal
                record["error"] = str(e)
                status = 400
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
