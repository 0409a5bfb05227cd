//! The sandbox accounts' password, as the engine gives it at start from Sluice's secret store
//! ([`install`]): the status counts it, and a job started as an account logs on with it. One
//! per process, like the accounts it opens, which are the machine's.

use std::sync::Mutex;

use super::Password;

static PASSWORD: Mutex<Option<Password>> = Mutex::new(None);

/// Keeps `password` (or forgets it, with `None`) for the jobs started from now on.
pub fn install(password: Option<Password>) {
    *PASSWORD.lock().unwrap_or_else(|e| e.into_inner()) = password;
    #[cfg(windows)]
    super::os::forget_status();
}

/// The password jobs log on with, if the engine has one.
pub fn password() -> Option<Password> {
    PASSWORD.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_kept_until_forgotten_and_never_shown() {
        let p = Password::generate();
        install(Some(p.clone()));
        assert_eq!(password(), Some(p));
        assert_eq!(format!("{:?}", password()), "Some(Password(…))");
        install(None);
        assert_eq!(password(), None);
    }
}
