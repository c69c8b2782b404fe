"""The local certificate authority of `--intercept-https` (the `cryptography` package).

On first use `CertificateAuthority.load_or_create(directory)` writes `readerproxy-ca.pem` (the
certificate to trust) and `readerproxy-ca-key.pem` (its private key, created with mode 0600 in a
0700 directory) under the data directory. Per-host certificates are minted on demand, signed by the
CA, valid for a year, and all share one leaf key made at start (as mitmproxy does: minting is then
one signature); the SSL contexts are cached per host in a bounded LRU.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..web.lru import ENTRY_OVERHEAD, LRU
from .flow import host_problem

CA_CERT_NAME = "readerproxy-ca.pem"
CA_KEY_NAME = "readerproxy-ca-key.pem"
CA_YEARS = 10
LEAF_DAYS = 365
CONTEXT_CACHE = 512


def spki_sha256(certificate: x509.Certificate) -> str:
    """Base64 SHA-256 of the certificate's SubjectPublicKeyInfo (Chromium's
    --ignore-certificate-errors-spki-list and HPKP format)."""
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


def _write_private(path: Path, data: bytes) -> None:
    """Create `path` with mode 0600 from the start (never world-readable, not even for a moment)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "readerproxy"),
        ]
    )


def make_ca(common_name: str = "readerproxy local CA") -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A new CA key and self-signed certificate (path length 0: it signs leaf certificates only)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = _name(common_name)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365 * CA_YEARS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_leaf(
    host: str,
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    leaf_key: ec.EllipticCurvePrivateKey,
    days: int = LEAF_DAYS,
) -> x509.Certificate:
    """A server certificate for `host` (a DNS name or an IP address) signed by the CA.

    ValueError unless `host` is an IP literal or a valid host name (LDH labels of 1-63 characters,
    not starting or ending with '-', at most 253 in all, IDNA-encodable): no certificate is minted
    for a wildcard (`*.example`), an underscore or an over-long label, whatever a CONNECT asks for.
    """
    problem = host_problem(host)
    if problem is not None:
        raise ValueError(f"no certificate for {host[:80]!r}: {problem}")
    if not host.isascii():
        host = host.encode("idna").decode("ascii")
    try:
        alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        alt = x509.DNSName(host)
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(host[:64]))
        .issuer_name(ca_cert.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@dataclass
class CertificateAuthority:
    """The CA (certificate and key) and the per-host server contexts minted from it."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate
    cert_path: Path | None = None

    def __post_init__(self) -> None:
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        # what follows each leaf in the file load_cert_chain reads: the CA, then the leaves' key
        self._chain_rest = pem(self.cert) + key_pem(self._leaf_key)
        # at most CONTEXT_CACHE hosts: every entry is charged the LRU's fixed overhead only
        self._contexts: LRU[str, ssl.SSLContext] = LRU(CONTEXT_CACHE * ENTRY_OVERHEAD, lambda _h, _c: 0)

    @classmethod
    def load_or_create(cls, directory: Path) -> CertificateAuthority:
        """The CA stored in `directory`, created there (key 0600, directory 0700) on first use."""
        cert_path, key_path = directory / CA_CERT_NAME, directory / CA_KEY_NAME
        if not (cert_path.exists() and key_path.exists()):
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            key, cert = make_ca()
            key_path.unlink(missing_ok=True)
            _write_private(key_path, key_pem(key))
            cert_path.write_bytes(pem(cert))
        loaded = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{key_path} does not hold the EC key readerproxy makes")
        return cls(loaded, x509.load_pem_x509_certificate(cert_path.read_bytes()), cert_path)

    @property
    def spki_sha256(self) -> str:
        return spki_sha256(self.cert)

    def context_for(self, host: str) -> ssl.SSLContext:
        """A server-side SSLContext presenting a certificate for `host` (minted once, then cached);
        ValueError for a `host` that is not a valid host name or IP literal (`make_leaf`)."""
        context = self._contexts.get(host)
        if context is not None:
            return context
        leaf = make_leaf(host, self.key, self.cert, self._leaf_key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        # load_cert_chain reads files only: write the chain and key to a private temporary file.
        with tempfile.NamedTemporaryFile("wb", suffix=".pem") as handle:
            os.chmod(handle.name, 0o600)
            handle.write(pem(leaf) + self._chain_rest)
            handle.flush()
            context.load_cert_chain(handle.name)
        self._contexts.set(host, context)
        return context


def ca_directory(data_dir: Path) -> Path:
    """Where the CA lives inside the data directory."""
    return data_dir / "ca"


def describe(ca: CertificateAuthority) -> str:
    """What `readerproxy ca` prints: where the certificate is and how to trust it."""
    fingerprint = ca.cert.fingerprint(hashes.SHA256()).hex(":").upper()
    return "\n".join(
        [
            f"CA certificate: {ca.cert_path}",
            f"SHA-256 fingerprint: {fingerprint}",
            f"SPKI SHA-256 (base64): {ca.spki_sha256}",
            "",
            "Import the certificate into the browser or phone that uses this proxy with --intercept-https:",
            "  Firefox: Settings > Privacy & Security > Certificates > View Certificates > Authorities > Import",
            "  Chrome/Chromium (Linux): Settings > Privacy and security > Security > Manage certificates > Authorities",
            "  Android: Settings > Security > Encryption & credentials > Install a certificate > CA certificate",
            "  iOS: open the file, install the profile, then enable it in Settings > General > About >",
            "       Certificate Trust Settings",
            "Whoever has the key file can impersonate any HTTPS site to a device that trusts this CA:",
            "keep it private, and remove the CA from the device when you stop using interception.",
        ]
    )
