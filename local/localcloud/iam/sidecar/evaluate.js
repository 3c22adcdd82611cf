'use strict';
// The IAM evaluator of the local cloud: @cloud-copilot/iam-simulate behind
// an HTTP server on 127.0.0.1, so that the Go proxy asks a maintained
// evaluator instead of reimplementing IAM's rules. The Go package starts
// one process, reads the port from the first line on stdout, POSTs one
// simulation per request, and ends the process by closing stdin (so a Go
// process that dies cannot leave this one behind).
//
// Request body: iam-simulate's Simulation object. Reply:
// {"result": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied"} or
// {"error": <iam-simulate's validation errors>} (an unknown action, a
// resource ARN of the wrong type, a malformed policy).
//
// The package is found through NODE_PATH, which the Go side sets to the
// repository's node_modules.
const http = require('http');
const { runSimulation } = require('@cloud-copilot/iam-simulate');

function reply(res, status, value) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function simulate(body) {
  const out = await runSimulation(JSON.parse(body), {});
  if (out.resultType === 'error') {
    return { error: out.errors };
  }
  return { result: out.overallResult };
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    simulate(Buffer.concat(chunks).toString('utf8')).then(
      (value) => reply(res, 200, value),
      (err) => reply(res, 500, { error: String((err && err.stack) || err) }),
    );
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
