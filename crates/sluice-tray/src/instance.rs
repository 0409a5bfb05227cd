//! One Sluice per data folder. The first instance holds a lock on `app.lock`; a later launch
//! finds it taken and asks the first to show its window instead, over loopback, with a
//! one-time key the first wrote to `app.instance` (owner-only, in the data folder). Only
//! someone who can read the data folder can knock; a knock can only open the window.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result};

pub enum Claim {
    /// This is the first instance.
    First(First),
    /// Another instance runs on this data folder.
    Running,
}

pub struct First {
    lock: File,
    listener: TcpListener,
    key: String,
}

const LOCK: &str = "app.lock";
const INSTANCE: &str = "app.instance";
/// What a knock says, after the key.
const SHOW: &str = "show";

/// Claims the data folder for this process, or finds that another instance has it.
pub fn claim(data_dir: &Path) -> Result<Claim> {
    sluice_engine::fsperm::create_private_dir(data_dir)
        .with_context(|| format!("cannot create the data folder {}", data_dir.display()))?;
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(data_dir.join(LOCK))
        .context("cannot open the instance lock")?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Claim::Running),
        Err(std::fs::TryLockError::Error(err)) => {
            return Err(err).context("cannot take the instance lock");
        }
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let port = listener.local_addr()?.port();
    sluice_engine::fsperm::write_private_atomic(
        &data_dir.join(INSTANCE),
        format!("{port} {key}\n").as_bytes(),
    )
    .context("cannot record this instance")?;
    Ok(Claim::First(First { lock, listener, key }))
}

impl First {
    /// Listens for knocks for as long as the process lives; `show` runs for each valid one.
    pub fn listen(self, show: impl Fn() + Send + 'static) -> io::Result<()> {
        std::thread::Builder::new().name("sluice-instance".into()).spawn(move || {
            let First { lock: _held, listener, key } = self;
            let expected = format!("{key} {SHOW}");
            for stream in listener.incoming().flatten() {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut line = String::new();
                // A knock is one short line: read no more than that.
                let read = BufReader::new(io::Read::take(&stream, 128)).read_line(&mut line);
                if read.is_ok() && constant_time_eq(line.trim_end().as_bytes(), expected.as_bytes())
                {
                    show();
                }
            }
        })?;
        Ok(())
    }
}

/// Asks the instance running on `data_dir` to show its window.
pub fn signal(data_dir: &Path) -> Result<()> {
    // The first instance may be between taking the lock and recording itself.
    let mut last = None;
    for _ in 0..20 {
        match knock(data_dir) {
            Ok(()) => return Ok(()),
            Err(err) => last = Some(err),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("no answer")))
        .context("Sluice is already running but did not answer")
}

fn knock(data_dir: &Path) -> Result<()> {
    let text = std::fs::read_to_string(data_dir.join(INSTANCE))?;
    let (port, key) = text.trim().split_once(' ').context("unreadable instance record")?;
    let port: u16 = port.parse().context("unreadable instance record")?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.write_all(format!("{key} {SHOW}\n").as_bytes())?;
    Ok(())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn a_second_claim_finds_the_first_and_its_knock_shows_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let Claim::First(first) = claim(dir.path()).unwrap() else { panic!("first claim") };
        assert!(matches!(claim(dir.path()).unwrap(), Claim::Running));
        let (tx, rx) = mpsc::channel();
        first.listen(move || tx.send(()).unwrap()).unwrap();
        signal(dir.path()).unwrap();
        rx.recv_timeout(Duration::from_secs(5)).expect("the knock shows the window");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(INSTANCE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_knock_without_the_key_does_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let Claim::First(first) = claim(dir.path()).unwrap() else { panic!("first claim") };
        let (tx, rx) = mpsc::channel();
        first.listen(move || tx.send(()).unwrap()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(INSTANCE)).unwrap();
        let port: u16 = text.split(' ').next().unwrap().parse().unwrap();
        for bad in ["show\n", "0000 show\n", "\n", &"x".repeat(1000)] {
            let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
            s.write_all(bad.as_bytes()).unwrap();
        }
        assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
    }
}
