/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Sluice's Windows build under
 * Debian 12's Wine 8.0 in tests, and for nothing else: it is never shipped, never put beside
 * a release binary, and `cargo xtask windows` copies it only into its private Wine folder.
 *
 * Why it exists: Rust's std (1.78 and later) takes its random bytes from `ProcessPrng` in
 * bcryptprimitives.dll (rust-lang/rust#121337), which Wine gained in 8.13. Under Wine 8.0 a
 * Rust program therefore fails to start: the loader cannot resolve that import. Windows 10
 * and 11 have the function, so the shipped program needs nothing like this.
 *
 * `ProcessPrng` fills the buffer and always returns TRUE (Microsoft documents it as unable to
 * fail). Here it asks `RtlGenRandom` (advapi32's `SystemFunction036`), which Wine backs with
 * the host's random source; that call takes a ULONG, so a larger request is served in pieces.
 * Should it ever fail, the process is ended rather than given predictable bytes.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG piece = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, piece)) {
            ExitProcess(70);
        }
        data += piece;
        length -= piece;
    }
    return TRUE;
}
