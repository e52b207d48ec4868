#!/usr/bin/env ruby
# frozen_string_literal: true
# roman_numeral: convert an integer from 1 to 3999 to a Roman numeral.
#
# toolsmith script tool, protocol = "jsonrpc": one request line arrives on stdin
# ({"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"arguments":{...},"context":{...}}})
# and the response to id 0 is written on stdout. run returns the result or raises; an
# out-of-range number is answered with a JSON-RPC error.
require 'json'

NUMERALS = [[1000, 'M'], [900, 'CM'], [500, 'D'], [400, 'CD'], [100, 'C'], [90, 'XC'],
            [50, 'L'], [40, 'XL'], [10, 'X'], [9, 'IX'], [5, 'V'], [4, 'IV'], [1, 'I']].freeze

def to_roman(number)
  NUMERALS.each_with_object(+'') do |(value, letters), out|
    count, number = number.divmod(value)
    out << letters * count
  end
end

def run(args, _ctx)
  number = args['number']
  number = number.to_i if number.is_a?(Float) && number == number.floor
  raise ArgumentError, '`number` must be an integer' unless number.is_a?(Integer)
  raise ArgumentError, "number must be between 1 and 3999, got #{number}" unless (1..3999).cover?(number)

  { 'roman' => to_roman(number) }
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
req = JSON.parse($stdin.gets)
params = req['params'] || {}
begin
  send_msg({ jsonrpc: '2.0', id: req.fetch('id', 0), result: run(params['arguments'] || {}, params['context'] || {}) })
rescue StandardError => e
  send_msg({ jsonrpc: '2.0', id: req.fetch('id', 0), error: { code: -32000, message: e.message } })
end
