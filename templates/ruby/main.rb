#!/usr/bin/env ruby
# frozen_string_literal: true
# {{name}}: {{description}}
#
# Calling convention (toolsmith, kind = "script", protocol = "jsonrpc"):
# - the host writes ONE JSON-RPC request line on stdin:
#   {"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}}
#   `arguments` match input_schema; `context` holds {"tool", "roots", "capabilities"}.
# - write newline-delimited JSON-RPC messages on stdout; the last one is the response to id 0:
#   {"jsonrpc":"2.0","id":0,"result":...} or {"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"..."}}
#   The helper below does this: return a value from run or raise.
# - log(msg) sends a "log" notification, progress(done, total, message) a "progress" one; call_host(method, params) sends a request to the host
#   (memory/get, memory/set, memory/list, memory/delete, tools/call, resources/read,
#   elicitation/create, sampling/createMessage) and returns its result. stderr is logged too.
# Never print anything else on stdout (use warn for debugging).
require 'json'

def run(args, _ctx)
  text = args['text']
  raise ArgumentError, 'missing string argument `text`' unless text.is_a?(String)

  { 'message' => "Hello, #{text}!" }
end

# --- toolsmith jsonrpc helper (keep as is) ---------------------------------------------------
$stdout.sync = true
[$stdin, $stdout].each { |io| io.set_encoding(Encoding::UTF_8) }
$next_id = 0
def send_msg(msg)
  $stdout.write(JSON.generate(msg) + "\n")
end
def log(msg, level = 'info')
  send_msg({ jsonrpc: '2.0', method: 'log', params: { level: level, message: msg.to_s } })
end
def progress(done, total = nil, message = nil)
  send_msg({ jsonrpc: '2.0', method: 'progress', params: { progress: done, total: total, message: message } })
end
def call_host(method, params = {})
  id = "c#{$next_id += 1}"
  send_msg({ jsonrpc: '2.0', id: id, method: method, params: params })
  loop do
    line = $stdin.gets or raise "host closed stdin while waiting for #{method}"
    resp = JSON.parse(line)
    next unless resp['id'] == id
    raise(resp['error']['message'] || 'host error') if resp['error']
    return resp['result']
  end
end
# One request; a warm worker (TOOLSMITH_WORKER=1) serves one after another.
while (line = $stdin.gets)
  next if line.strip.empty?
  req = JSON.parse(line)
  params = req['params'] || {}
  begin
    send_msg({ jsonrpc: '2.0', id: req.fetch('id', 0), result: run(params['arguments'] || {}, params['context'] || {}) })
  rescue StandardError => e
    send_msg({ jsonrpc: '2.0', id: req.fetch('id', 0), error: { code: -32000, message: e.message } })
  end
  break unless ENV['TOOLSMITH_WORKER'] == '1'
end
