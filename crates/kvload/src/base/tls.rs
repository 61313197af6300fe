//! tls: rustls client configuration from the command-line options.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};


/// The TLS options (`--tls`, `--sni`, `--cacert`, `--cacertdir`, `--insecure`, `--cert`, `--key`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsOptions {
    pub enabled: bool,
    pub sni: Option<String>,
    pub cacert: Option<String>,
    pub cacertdir: Option<String>,
    pub insecure: bool,
    pub cert: Option<String>,
    pub key: Option<String>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn load_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read certificates from {path}: {e}"))?
        .collect();
    let certs = certs.map_err(|e| format!("bad certificate in {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("no certificates found in {path}"));
    }
    Ok(certs)
}

fn roots(o: &TlsOptions) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    let mut files: Vec<String> = o.cacert.iter().cloned().collect();
    if let Some(dir) = &o.cacertdir {
        let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
        for entry in rd.flatten() {
            let p = entry.path();
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "pem" | "crt" | "0") {
                files.push(p.to_string_lossy().into_owned());
            }
        }
    }
    if files.is_empty() {
        files.push("/etc/ssl/certs/ca-certificates.crt".into());
    }
    for f in files {
        for c in load_certs(&f)? {
            store.add(c).map_err(|e| format!("bad CA certificate in {f}: {e}"))?;
        }
    }
    Ok(store)
}

/// Accepts any server certificate (`--insecure`); signatures are still checked.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Builds the shared client configuration.
pub fn client_config(o: &TlsOptions) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = if o.insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
    } else {
        builder.with_root_certificates(roots(o)?)
    };
    let cfg = match (&o.cert, &o.key) {
        (Some(cert), Some(key)) => {
            let chain = load_certs(cert)?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read key {key}: {e}"))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| format!("bad client certificate: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("--cert and --key must be given together".into()),
    };
    Ok(Arc::new(cfg))
}

/// Server name for SNI/verification: --sni, else the host.
pub fn server_name(o: &TlsOptions, host: &str) -> Result<ServerName<'static>, String> {
    let name = o.sni.clone().unwrap_or_else(|| host.to_string());
    ServerName::try_from(name.clone()).map_err(|_| format!("invalid TLS server name '{name}'"))
}
