//! Dropping root after the capture device is open (`-Z USER`, as tcpdump does).

use crate::error::CaptureError;
use nix::unistd::{initgroups, setgid, setuid, User};
use std::ffi::CString;

/// Switch to `user`'s uid, gid and supplementary groups. Call after opening devices.
pub fn drop_privileges(user: &str) -> Result<(), CaptureError> {
    let err = |detail: String| CaptureError::Privileges { detail };
    let u = User::from_name(user)
        .map_err(|e| err(format!("looking up user {user:?}: {e}")))?
        .ok_or_else(|| err(format!("no such user {user:?}")))?;
    let cname = CString::new(user).map_err(|_| err("user name contains a NUL byte".into()))?;
    initgroups(&cname, u.gid).map_err(|e| err(format!("setting the groups of {user:?}: {e}")))?;
    setgid(u.gid).map_err(|e| err(format!("setgid({}): {e}", u.gid)))?;
    setuid(u.uid).map_err(|e| err(format!("setuid({}): {e}", u.uid)))?;
    Ok(())
}
