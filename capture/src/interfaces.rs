//! `rocescope interfaces`: what libpcap can open, like `tcpdump -D`, with a note on whether
//! each can carry RoCE that a capture will see.

use crate::error::CaptureError;
use std::path::Path;

/// One capturable interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceInfo {
    /// Name to pass to `-i`.
    pub name: String,
    /// libpcap's description, if any.
    pub description: Option<String>,
    /// Administratively up.
    pub up: bool,
    /// Running (link up).
    pub running: bool,
    /// Loopback.
    pub loopback: bool,
    /// Addresses, as text.
    pub addresses: Vec<String>,
    /// Whether and how RoCE shows up here.
    pub roce_note: String,
}

/// A sysfs attribute's text (`None` when it cannot be read), read as every small file is:
/// a regular file of at most [`SYSFS_LIMIT`](crate::small_file::SYSFS_LIMIT) bytes.
pub(crate) fn sysfs(p: &Path) -> Option<String> {
    let bytes = crate::small_file::read_small(p, "sysfs attribute", crate::small_file::SYSFS_LIMIT).ok()?;
    String::from_utf8(bytes).ok()
}

fn read_dir_names(p: &Path) -> Vec<String> {
    std::fs::read_dir(p)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string())).collect())
        .unwrap_or_default()
}

/// The soft-RoCE (rxe/siw) devices running over `netdev`.
fn soft_roce_over(netdev: &str) -> Vec<String> {
    read_dir_names(Path::new("/sys/class/infiniband"))
        .into_iter()
        .filter(|dev| {
            sysfs(&Path::new("/sys/class/infiniband").join(dev).join("parent"))
                .is_some_and(|p| p.trim() == netdev)
        })
        .collect()
}

/// The RDMA devices a NIC behind `netdev` exposes (e.g. `mlx5_0`).
pub fn rdma_devices_of(netdev: &str) -> Vec<String> {
    read_dir_names(&Path::new("/sys/class/net").join(netdev).join("device/infiniband"))
}

/// A note on how RoCE appears on `name`.
pub fn roce_note(name: &str, loopback: bool, up: bool) -> String {
    if name == "any" {
        return "all interfaces (Linux cooked v2): sees RoCE that passes through the kernel".into();
    }
    if Path::new("/sys/class/infiniband").join(name).exists() {
        return "RDMA device: sees offloaded RoCE when libpcap was built with RDMA sniffing".into();
    }
    if !Path::new("/sys/class/net").join(name).exists() {
        return "not a network interface: carries no RoCE".into();
    }
    let soft = soft_roce_over(name);
    let rdma = rdma_devices_of(name);
    let mut note = if !soft.is_empty() {
        format!("soft-RoCE {} runs over it: its RoCE is visible here", soft.join(", "))
    } else if !rdma.is_empty() {
        format!(
            "RDMA NIC ({}): offloaded RoCE bypasses this interface; capture on {} (RDMA sniffing), use the NIC's sniffer mode, or a switch mirror",
            rdma.join(", "),
            rdma.first().map(String::as_str).unwrap_or("the RDMA device")
        )
    } else if loopback {
        "loopback: RoCE only from soft-RoCE bound to it".into()
    } else {
        "no RDMA device: RoCE seen only from soft-RoCE peers, mirrors or TAPs feeding it".into()
    };
    if !up {
        note.push_str(" [down]");
    }
    note
}

/// Every interface libpcap can open.
pub fn list() -> Result<Vec<InterfaceInfo>, CaptureError> {
    let devices = pcap::Device::list().map_err(|e| CaptureError::Live {
        interface: String::new(),
        detail: format!("cannot list interfaces: {e}"),
    })?;
    Ok(devices
        .into_iter()
        .map(|d| {
            let up = d.flags.is_up();
            let loopback = d.flags.is_loopback();
            InterfaceInfo {
                roce_note: roce_note(&d.name, loopback, up),
                running: d.flags.is_running(),
                addresses: d.addresses.iter().map(|a| a.addr.to_string()).collect(),
                description: d.desc,
                name: d.name,
                up,
                loopback,
            }
        })
        .collect())
}

/// Why a live capture on `interface` may be seeing no RoCE.
pub fn blind_hint(interface: &str) -> String {
    let mut s = format!(
        "no RoCE seen on {interface} yet. NIC-offloaded RoCE never reaches the kernel interface: capture on the RDMA device (e.g. `-i mlx5_0`, with a libpcap built with RDMA sniffing), turn on the NIC's sniffer mode, or capture from a switch mirror port."
    );
    let rdma = rdma_devices_of(interface);
    if let Some(dev) = rdma.first() {
        s.push_str(&format!(" {interface} belongs to RDMA device {dev}: try `-i {dev}`."));
    }
    s
}
