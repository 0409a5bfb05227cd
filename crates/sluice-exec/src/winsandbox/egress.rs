//! Windows: who is at the other end of a loopback connection to a job's proxy. The proxy
//! listens on the host's loopback, which every program on the machine reaches; it serves only
//! processes in the job's Job Object, so a job of a project whose network is off (the same
//! sandbox account, the same firewall rules) cannot borrow it. The client's process comes from
//! the system's TCP table (`GetExtendedTcpTable`: the row whose ends are the connection's), and
//! `IsProcessInJob` says whether it is in the job.
//!
//! UNTESTED: type-checked on Linux (`cargo xtask check-targets`), never run.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};

use windows_sys::Win32::Foundation::{CloseHandle, ERROR_INSUFFICIENT_BUFFER, NO_ERROR};
use windows_sys::Win32::NetworkManagement::IpHelper::{
    GetExtendedTcpTable, MIB_TCPROW_OWNER_PID, TCP_TABLE_OWNER_PID_CONNECTIONS,
};
use windows_sys::Win32::Networking::WinSock::AF_INET;
use windows_sys::Win32::System::JobObjects::IsProcessInJob;
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};

use crate::winjob::JobObject;

/// Whether the process that made `client` (a connection accepted on loopback) is in `job`.
/// Anything that cannot be told is no.
pub(crate) fn client_in_job(client: &TcpStream, job: &JobObject) -> bool {
    let (Ok(SocketAddr::V4(theirs)), Ok(SocketAddr::V4(ours))) =
        (client.peer_addr(), client.local_addr())
    else {
        return false;
    };
    let Some(pid) = owner(theirs, ours) else { return false };
    // SAFETY: plain arguments; the handle is checked, and closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return false;
    }
    let mut inside = 0;
    // SAFETY: both handles are valid for the call; `inside` is written.
    let ok = unsafe { IsProcessInJob(process, job.raw(), &mut inside) };
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(process) };
    ok != 0 && inside != 0
}

/// The process owning the connection from `client_end` to `server_end`, by the TCP table.
fn owner(client_end: SocketAddrV4, server_end: SocketAddrV4) -> Option<u32> {
    let mut size = 0u32;
    for _ in 0..4 {
        // u32s: the table's alignment.
        let mut buf = vec![0u32; (size as usize).div_ceil(4).max(1)];
        // SAFETY: `buf` holds `size` bytes (or more); the call writes at most that and says
        // how much it needs when it is not enough.
        let rc = unsafe {
            GetExtendedTcpTable(
                buf.as_mut_ptr().cast(),
                &mut size,
                0,
                u32::from(AF_INET),
                TCP_TABLE_OWNER_PID_CONNECTIONS,
                0,
            )
        };
        if rc == ERROR_INSUFFICIENT_BUFFER {
            continue;
        }
        if rc != NO_ERROR {
            return None;
        }
        return rows(&buf, size as usize)
            .find(|row| {
                end(row.dwLocalAddr, row.dwLocalPort) == client_end
                    && end(row.dwRemoteAddr, row.dwRemotePort) == server_end
            })
            .map(|row| row.dwOwningPid);
    }
    None
}

/// The rows of a `MIB_TCPTABLE_OWNER_PID` in `buf` (of which `len` bytes were written).
fn rows(buf: &[u32], len: usize) -> impl Iterator<Item = MIB_TCPROW_OWNER_PID> + '_ {
    let count = buf.first().copied().unwrap_or(0) as usize;
    let row_words = std::mem::size_of::<MIB_TCPROW_OWNER_PID>() / 4;
    let fits =
        len.min(buf.len() * 4).saturating_sub(4) / std::mem::size_of::<MIB_TCPROW_OWNER_PID>();
    (0..count.min(fits)).map(move |i| {
        let w = &buf[1 + i * row_words..1 + (i + 1) * row_words];
        MIB_TCPROW_OWNER_PID {
            dwState: w[0],
            dwLocalAddr: w[1],
            dwLocalPort: w[2],
            dwRemoteAddr: w[3],
            dwRemotePort: w[4],
            dwOwningPid: w[5],
        }
    })
}

/// An address and port as the TCP table keeps them (network byte order, the port in the low
/// 16 bits).
fn end(addr: u32, port: u32) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from(addr.to_ne_bytes()), u16::from_be(port as u16))
}
