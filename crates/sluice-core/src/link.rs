//! The link to a job's published port: the one form every surface shows (the assistant's
//! results, the Jobs view, `sluice jobs`) and the only URL the app ever hands to the browser.

/// The link to a port published on the host's loopback at `host_port`.
pub fn job_link(host_port: u16) -> String {
    format!("http://127.0.0.1:{host_port}/")
}

/// The host port of `url` when it is exactly a link [`job_link`] makes, else `None`: no user
/// part (`http://127.0.0.1:80@elsewhere/`), no path, no other host or form of the address.
pub fn job_link_port(url: &str) -> Option<u16> {
    let digits = url.strip_prefix("http://127.0.0.1:")?.strip_suffix('/')?;
    let canonical = !digits.is_empty() && digits.len() <= 5 && !digits.starts_with('0');
    let port = digits.bytes().all(|b| b.is_ascii_digit()).then(|| digits.parse::<u16>().ok())??;
    canonical.then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_link_form_is_a_job_link() {
        assert_eq!(job_link_port(&job_link(41234)), Some(41234));
        assert_eq!(job_link_port(&job_link(1)), Some(1));
        assert_eq!(job_link_port(&job_link(65535)), Some(65535));
        for hostile in [
            "http://127.0.0.1:80@evil.example/",
            "http://127.0.0.1:80@evil.example:80/",
            "http://127.0.0.1:8000/../",
            "http://127.0.0.1:8000/?x",
            "http://127.0.0.1:8000/#x",
            "http://127.0.0.1:8000",
            "http://127.0.0.1:8000//evil.example",
            "http://127.0.0.1.evil.example:8000/",
            "http://127.0.0.1:+8000/",
            "http://127.0.0.1:08000/",
            "http://127.0.0.1:0/",
            "http://127.0.0.1:65536/",
            "http://127.0.0.1:99999999999999999999/",
            "http://127.0.0.1:/",
            "http://127.0.0.1:8000/\n",
            "https://127.0.0.1:8000/",
            "HTTP://127.0.0.1:8000/",
            "http://localhost:8000/",
            "http://[::1]:8000/",
            "http://0x7f000001:8000/",
            "file:///etc/passwd",
            "javascript:alert(1)//http://127.0.0.1:8000/",
            "",
        ] {
            assert_eq!(job_link_port(hostile), None, "{hostile:?}");
        }
    }
}
