// A transparent loopback proxy that adds `Authorization: Bearer $SLUICE_TOKEN` to every request,
// so suites without a bearer-token option (the MCP conformance suite) can test Sluice with its
// authentication fully on. Host and Origin are mapped from the proxy's port to Sluice's port (the
// proxy stands in for Sluice's address) and otherwise passed through untouched, as is every other
// header, so Sluice's own Host/Origin checks are what the suite exercises.
//
// Usage: node auth-proxy.mjs LISTEN_PORT TARGET_PORT   (prints "ready" when listening)
import http from "node:http";

const [listenPort, targetPort] = process.argv.slice(2).map(Number);
const token = process.env.SLUICE_TOKEN;
if (!listenPort || !targetPort || !token) {
  console.error("usage: SLUICE_TOKEN=… node auth-proxy.mjs LISTEN_PORT TARGET_PORT");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  for (const name of ["host", "origin"]) {
    const m = typeof headers[name] === "string" && headers[name].match(/^(.*):(\d+)$/);
    if (m && Number(m[2]) === listenPort) headers[name] = `${m[1]}:${targetPort}`;
  }
  const upstream = http.request(
    { host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on("error", (e) => {
    res.writeHead(502);
    res.end(String(e));
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
});
server.listen(listenPort, "127.0.0.1", () => console.log("ready"));
