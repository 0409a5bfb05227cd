"""A tunnel for tests: Sluice starts it as a tunnel command (`sluice reach on --tunnel-command`)
the way it starts cloudflared or ngrok, which need the internet. Like their edges it terminates
TLS (a test certificate, made once per --cert-dir so a restarted edge keeps it) and forwards the
bytes, Host header and all, to Sluice's tunnel port; like a quick tunnel it listens on an address
of its own choosing and prints it. With --child it also leaves a process in its group, as real
tunnels' helpers do, so a test can see the whole group stopped."""

import argparse
import asyncio
import datetime
import ipaddress
import os
import ssl
import subprocess
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def make_cert(folder):
    """A self-signed certificate for localhost: the tunnel edge's, made once."""
    cert_path, key_path = os.path.join(folder, "edge.pem"), os.path.join(folder, "edge.key")
    if os.path.exists(cert_path) and os.path.exists(key_path):
        return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    with open(key_path + ".tmp", "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    os.replace(key_path + ".tmp", key_path)
    with open(cert_path + ".tmp", "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    os.replace(cert_path + ".tmp", cert_path)
    return cert_path, key_path


async def edge(port, backend, cert, key):
    """The tunnel's edge: terminates TLS and forwards the bytes, Host header and all, to the
    port Sluice listens on for the tunnel."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except Exception:
            pass
        finally:
            writer.close()

    async def handle(reader, writer):
        try:
            b_reader, b_writer = await asyncio.open_connection("127.0.0.1", backend)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, b_writer), pipe(b_reader, writer))

    return await asyncio.start_server(handle, "127.0.0.1", port, ssl=ctx)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", type=int, required=True)
    ap.add_argument("--cert-dir", required=True)
    ap.add_argument("--listen", type=int, default=0)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.cert_dir, exist_ok=True)
    cert, key = make_cert(args.cert_dir)
    print("Starting the test edge; see https://example.com/docs/edge for help", flush=True)
    if args.child:
        helper = subprocess.Popen(["sleep", "600"])
        print(f"child pid {helper.pid}", flush=True)
    server = await edge(args.listen, args.backend, cert, key)
    port = server.sockets[0].getsockname()[1]
    print(f"Your tunnel is ready: https://localhost:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
