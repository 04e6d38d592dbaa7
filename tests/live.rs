//! Live capture end to end, on a veth pair between two network namespaces made for the
//! test: tcpreplay sends a sample into one end, rocescope captures on the other. Needs root,
//! iproute2 and tcpreplay; skips with a message otherwise. No traffic leaves the namespaces.

mod common;

use rocescope_capture::CaptureReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Two namespaces joined by a veth pair; removed on drop.
struct Pair {
    a: String,
    b: String,
}

fn sh(cmd: &[&str]) -> bool {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn can_run() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"));
    let tools = sh(&["ip", "-V"]) && sh(&["tcpreplay", "-V"]);
    if !root || !tools {
        common::skip(&format!(
            "live tests: they need root, iproute2 and tcpreplay (root={root}, tools={tools})"
        ));
        return false;
    }
    true
}

impl Pair {
    fn new() -> Option<Pair> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let id = format!("rs{}x{n}", std::process::id() % 100_000);
        let (a, b) = (format!("{id}a"), format!("{id}b"));
        let ok = sh(&["ip", "netns", "add", &a])
            && sh(&["ip", "netns", "add", &b])
            && sh(&["ip", "link", "add", &a, "type", "veth", "peer", "name", &b])
            && sh(&["ip", "link", "set", &a, "netns", &a])
            && sh(&["ip", "link", "set", &b, "netns", &b])
            && sh(&["ip", "-n", &a, "link", "set", &a, "mtu", "9000", "up"])
            && sh(&["ip", "-n", &b, "link", "set", &b, "mtu", "9000", "up"]);
        let pair = Pair { a, b };
        if !ok {
            common::skip("could not create network namespaces and a veth pair");
            return None;
        }
        Some(pair)
    }

    /// Run rocescope inside the capturing namespace.
    fn rocescope(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.b, env!("CARGO_BIN_EXE_rocescope")]).args(args);
        c
    }

    fn replay(&self, pcap: &Path) {
        let ok = Command::new("ip")
            .args(["netns", "exec", &self.a, "tcpreplay", "-q", "-i", &self.a])
            .arg(pcap)
            .output()
            .expect("tcpreplay");
        assert!(ok.status.success(), "tcpreplay: {}", String::from_utf8_lossy(&ok.stderr));
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        sh(&["ip", "netns", "del", &self.a]);
        sh(&["ip", "netns", "del", &self.b]);
    }
}

fn frames(path: &Path) -> Vec<Vec<u8>> {
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        v.push(rec.data.to_vec());
    }
    v
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

/// Start a capture, wait until it is listening, replay, and wait for it to end.
fn capture_replayed(pair: &Pair, args: &[&str], pcap: &Path) -> Output {
    let child = pair.rocescope(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    pair.replay(pcap);
    child.wait_with_output().unwrap()
}

fn tshark_reads(path: &Path) -> Option<usize> {
    let o = Command::new("tshark").arg("-r").arg(path).output().ok()?;
    if !o.status.success() {
        panic!("tshark cannot read {}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    }
    Some(String::from_utf8_lossy(&o.stdout).lines().count())
}

#[test]
fn captures_a_replayed_sample_frame_by_frame() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.pcapng");
    let o = capture_replayed(
        &pair,
        &["capture", "-q", "-i", &pair.b, "-w", out.to_str().unwrap(), "--duration", "2.5"],
        &sample("demo.pcap"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let sent = frames(&sample("demo.pcap"));
    let got = frames(&out);
    assert_eq!(got.len(), sent.len(), "{err}");
    for (i, (g, s)) in got.iter().zip(&sent).enumerate() {
        assert_eq!(g, s, "frame {} differs", i + 1);
    }
    assert!(err.contains(&format!("{} packets captured on {}", sent.len(), pair.b)), "{err}");
    assert!(err.contains("0 packets dropped by kernel"), "{err}");
    assert!(err.contains(&format!("{} packets written to", sent.len())), "{err}");
    // The pcapng names the interface and keeps nanoseconds; the statistics block is there.
    if let Some(n) = tshark_reads(&out) {
        assert_eq!(n, sent.len());
    }
    let cap = Command::new("capinfos").arg(&out).output();
    if let Ok(c) = cap {
        let text = String::from_utf8_lossy(&c.stdout);
        assert!(text.contains("nanoseconds"), "{text}");
    }
}

#[test]
fn the_default_filter_catches_mirrored_and_tunnelled_traffic() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let encaps = [
        "erspan1",
        "erspan2",
        "erspan3",
        "gretap",
        "gre",
        "vxlan",
        "geneve",
        "mpls-pw",
        "mpls-pw-cw",
        "mpls-ip",
    ];
    for e in encaps {
        let file = sample(&format!("tunnels/demo-{e}.pcap"));
        let out = dir.path().join(format!("{e}.pcapng"));
        let o = capture_replayed(
            &pair,
            &["capture", "-q", "-i", &pair.b, "-w", out.to_str().unwrap(), "--duration", "2"],
            &file,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{e}: {err}");
        let sent = frames(&file);
        let got = frames(&out);
        assert_eq!(
            got.len(),
            sent.len(),
            "{e}: the default filter let through {} of {}",
            got.len(),
            sent.len()
        );
        assert!(got.iter().zip(&sent).all(|(g, s)| g == s), "{e}: frames differ");
    }
}

/// `pcap` with every frame's outer UDP destination port (untagged IPv4 frames) set to
/// `port`: the VXLAN sample re-encapsulated on another port.
fn with_outer_udp_port(pcap: &Path, port: u16, out: &Path) {
    let mut b = std::fs::read(pcap).unwrap();
    assert_eq!(&b[..4], &[0x4d, 0x3c, 0xb2, 0xa1], "a little-endian nanosecond pcap");
    let mut at = 24;
    while at + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let f = at + 16;
        assert_eq!(&b[f + 12..f + 14], &[0x08, 0x00], "untagged IPv4 outside");
        assert_eq!(b[f + 14 + 9], 17, "UDP outside");
        let udp = f + 14 + usize::from(b[f + 14] & 15) * 4;
        b[udp + 2..udp + 4].copy_from_slice(&port.to_be_bytes());
        b[udp + 6..udp + 8].copy_from_slice(&[0, 0]); // no checksum (the port changed)
        at = f + caplen;
    }
    std::fs::write(out, b).unwrap();
}

#[test]
fn the_default_filter_follows_extra_vxlan_ports() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("vxlan-8472.pcap");
    with_outer_udp_port(&sample("tunnels/demo-vxlan.pcap"), 8472, &moved);
    let sent = frames(&moved);
    // The decoder reads them with the port given...
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "--vxlan-port", "8472", "-r"])
        .arg(&moved)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["summary"]["roce"].as_u64().unwrap() > 100, "the moved sample still holds RoCE");
    // ...and so does the default capture filter: all of them arrive, none without the port.
    for (extra, want) in [(true, sent.len()), (false, 0)] {
        let out = dir.path().join(format!("{extra}.pcapng"));
        let mut args = vec!["capture", "-q", "-i", &pair.b, "-w", out.to_str().unwrap(), "--duration", "2"];
        if extra {
            args.extend(["--vxlan-port", "8472"]);
        }
        let o = capture_replayed(&pair, &args, &moved);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got = frames(&out);
        assert_eq!(got.len(), want, "--vxlan-port given: {extra}");
        assert!(got.iter().zip(&sent).all(|(g, s)| g == s), "frames differ");
    }
}

#[test]
fn ring_buffer_keeps_the_newest_files_and_each_is_valid() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("ring.pcapng");
    let args = [
        "capture",
        "-q",
        "-i",
        &pair.b,
        "-w",
        base.to_str().unwrap(),
        "-C",
        "0.02",
        "-W",
        "3",
        "--duration",
        "2.5",
    ];
    let o = capture_replayed(&pair, &args, &sample("demo.pcap"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with("ring_") && name.ends_with(".pcapng"), "{name}");
        let n = frames(f).len();
        assert!(n > 0, "{name} is empty");
        tshark_reads(f);
    }
    // 146 kB of frames in 20 kB files: the numbering says how many were made.
    let last = files.last().unwrap().file_name().unwrap().to_string_lossy().to_string();
    let number: u32 = last["ring_".len().."ring_".len() + 5].parse().unwrap();
    assert!(number >= 7, "only {number} files made");
    // The newest files end with the sample's last frames.
    let sent = frames(&sample("demo.pcap"));
    let kept: Vec<Vec<u8>> = files.iter().flat_map(|f| frames(f)).collect();
    assert_eq!(&sent[sent.len() - kept.len()..], &kept[..]);
}

#[test]
fn sigint_mid_capture_leaves_a_complete_file() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("int.pcap");
    let child: Child = pair
        .rocescope(&["capture", "-q", "--pcap", "-i", &pair.b, "-w", out.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    pair.replay(&sample("rc-normal.pcap"));
    std::thread::sleep(Duration::from_millis(300));
    // `ip netns exec` execs rocescope, so the child's pid is rocescope's.
    assert!(sh(&["kill", "-INT", &child.id().to_string()]));
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "did not stop promptly");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("stopped by signal"), "{err}");
    let sent = frames(&sample("rc-normal.pcap"));
    assert_eq!(frames(&out), sent);
    if let Some(n) = tshark_reads(&out) {
        assert_eq!(n, sent.len());
    }
}

#[test]
fn writes_to_stdout_for_a_pipe_and_decodes_live() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    // capture -w - | decode -r -
    let mut cap = pair
        .rocescope(&["capture", "-q", "-i", &pair.b, "-w", "-", "--duration", "2.5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["decode", "--json", "-r", "-"])
        .stdin(cap.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    pair.replay(&sample("ecn-cnp.pcap"));
    let o = decode.wait_with_output().unwrap();
    assert!(cap.wait().unwrap().success());
    let lines = common::decode_lines(&o.stdout).len();
    assert_eq!(lines, frames(&sample("ecn-cnp.pcap")).len());

    // decode -i: the same stream decoded as it arrives.
    let o = capture_replayed(&pair, &["decode", "-i", &pair.b, "--duration", "2.5"], &sample("rnr.pcap"));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("RNR-NAK timer=1.28ms"), "{text}");
    assert_eq!(text.lines().count(), frames(&sample("rnr.pcap")).len());
}

#[test]
fn errors_say_what_to_do() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let run = |args: &[&str]| pair.rocescope(args).output().unwrap();
    let o = run(&["decode", "-i", "nosuch0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("no such interface") && err.contains(&pair.b), "{err}");

    // A second veth pair inside the namespace, left down.
    assert!(sh(&["ip", "-n", &pair.b, "link", "add", "rsdown0", "type", "veth", "peer", "name", "rsdown1"]));
    let o = run(&["decode", "-i", "rsdown0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the interface is down") && err.contains("ip link set rsdown0 up"), "{err}");

    let o = run(&["decode", "-i", &pair.b, "-f", "udp port"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad capture filter \"udp port\"") && err.contains("syntax error"), "{err}");

    // Without CAP_NET_RAW.
    if sh(&["setpriv", "--version"]) {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &pair.b,
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(env!("CARGO_BIN_EXE_rocescope"))
            .args(["decode", "-i", &pair.b])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("permission denied") && err.contains("CAP_NET_RAW") && err.contains("setcap"),
            "{err}"
        );
    }

    // -Z: the device is opened as root, the file is written as the user.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = dir.path().join("z.pcapng");
    let o = run(&[
        "capture",
        "-q",
        "-i",
        &pair.b,
        "-Z",
        "nobody",
        "-w",
        out.to_str().unwrap(),
        "--duration",
        "0.5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&out).unwrap());
    assert_eq!(uid, 65534);
    let o = run(&["decode", "-i", &pair.b, "-Z", "no-such-user-here"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such user"));
}

#[test]
fn a_full_disk_leaves_a_valid_file_and_says_so() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    if !sh(&["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt.to_str().unwrap()]) {
        common::skip("cannot mount a small tmpfs");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            sh(&["umount", self.0.to_str().unwrap()]);
        }
    }
    let _guard = Unmount(mnt.clone());
    let out = mnt.join("full.pcapng");
    let o = capture_replayed(
        &pair,
        &["capture", "-q", "-i", &pair.b, "-w", out.to_str().unwrap(), "--duration", "2.5"],
        &sample("demo.pcap"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not written") && err.contains("No space left"), "{err}");
    let kept = frames(&out);
    assert!(!kept.is_empty() && kept.len() < 182, "{} frames kept", kept.len());
    let sent = frames(&sample("demo.pcap"));
    assert_eq!(&sent[..kept.len()], &kept[..]);
    tshark_reads(&out);
}

#[test]
fn a_quiet_capture_explains_why_it_may_be_blind() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let o = pair
        .rocescope(&["decode", "-i", &pair.b, "--duration", "2.2", "--blind-after", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("no RoCE seen on") && err.contains("RDMA device") && err.contains("mirror"),
        "{err}"
    );
    assert!(err.contains("0 packets captured on"), "{err}");
}

#[test]
fn report_on_a_live_interface_includes_the_capture_counters() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let o = capture_replayed(
        &pair,
        &["report", "--json", "-i", &pair.b, "--duration", "2.5"],
        &sample("nak-gobackn.pcap"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = common::report_json(&o.stdout);
    let n = frames(&sample("nak-gobackn.pcap")).len() as u64;
    assert_eq!(r["capture"]["received"], n);
    assert_eq!(r["capture"]["kernel_dropped"], 0);
    assert_eq!(r["summary"]["packets"], n);
    assert!(r["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "network_loss"));
}

#[test]
fn the_tui_follows_a_live_interface_freezes_and_clears() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let cmd = format!(
        "ip netns exec {} {} tui -i {} --blind-after 0.5; echo EXITED $?; sleep 30",
        pair.b,
        env!("CARGO_BIN_EXE_rocescope"),
        pair.b
    );
    let Some(t) = common::Tmux::start(&cmd) else { return };
    let s = t.wait_for("(live)");
    assert!(s.contains(&pair.b), "names the interface:\n{s}");
    // Nothing yet: the blind-interface hint shows under the header, not on stderr.
    t.wait_for("no RoCE seen on");
    pair.replay(&sample("nak-gobackn.pcap"));
    let s = t.wait_for("24 packets (24 RoCE)");
    assert!(s.contains("3 of 3"), "the three connections:\n{s}");
    assert!(s.contains("drops 0 kernel / 0 if"), "libpcap's counters in the header:\n{s}");
    // Frozen: a second replay is counted but not shown until Space again.
    t.keys(&["Space"]);
    t.wait_for("FROZEN");
    pair.replay(&sample("nak-gobackn.pcap"));
    std::thread::sleep(Duration::from_millis(800));
    assert!(t.screen().contains("24 packets (24 RoCE)"), "frozen view moved:\n{}", t.screen());
    t.keys(&["Space"]);
    t.wait_for("48 packets (48 RoCE)");
    // Clear restarts the counters; quit restores the terminal.
    t.keys(&["c"]);
    t.wait_for("0 packets (0 RoCE)");
    t.keys(&["q"]);
    let s = t.wait_for("EXITED 0");
    assert!(!s.contains("(live)"), "alternate screen left:\n{s}");
}

#[test]
fn export_on_a_live_interface_pushes_what_it_captured() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let o = capture_replayed(
        &pair,
        &["export", "--no-http", "--push", "-", "--interval", "0.5", "-i", &pair.b, "--duration", "2.5"],
        &sample("ecn-cnp.pcap"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() >= 3, "a line every half second: {}", lines.len());
    let last = lines.last().unwrap();
    let sum = |name: &str| common::pushed_sum(last, name);
    let n = frames(&sample("ecn-cnp.pcap")).len() as f64;
    assert_eq!(sum("rocescope_capture_received_packets_total"), n);
    assert_eq!(sum("rocescope_capture_dropped_packets_total"), 0.0);
    assert_eq!(sum("rocescope_frames_total"), n);
    assert!(sum("rocescope_cnp_packets_total") > 0.0);
    assert!(sum("rocescope_ecn_packets_total") > 0.0);
    // The capture point is the interface.
    let point = last["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "rocescope_flow_packets_total" && m["labels"]["point"] != "other")
        .map(|m| m["labels"]["point"].clone());
    assert_eq!(point, Some(serde_json::Value::from(pair.b.clone())));
}

#[test]
fn export_stopped_by_sigint_pushes_its_final_figures() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    // A long interval: the only line can come from the stop.
    let child: Child = pair
        .rocescope(&["export", "--no-http", "--push", "-", "--interval", "60", "-i", &pair.b])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    pair.replay(&sample("rc-normal.pcap"));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(sh(&["kill", "-INT", &child.id().to_string()]));
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "did not stop promptly");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let last: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("a line at the stop")).unwrap();
    assert_eq!(
        common::pushed_sum(&last, "rocescope_frames_total"),
        frames(&sample("rc-normal.pcap")).len() as f64
    );
}

#[test]
fn export_push_into_a_closed_pipe_ends_the_exporter() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let mut child: Child = pair
        .rocescope(&["export", "--no-http", "--push", "-", "--interval", "0.2", "-i", &pair.b])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first line, then close the pipe (as `| head -n1` does).
    let mut out = child.stdout.take().unwrap();
    let mut buf = [0u8; 1];
    while std::io::Read::read(&mut out, &mut buf).map(|n| n == 1 && buf[0] != b'\n').unwrap_or(false) {}
    drop(out);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.try_wait().unwrap();
    if status.is_none() {
        let _ = child.kill();
    }
    assert_eq!(status.and_then(|s| s.code()), Some(0), "ends quietly once its reader is gone");
}

#[test]
fn export_stops_tracking_idle_flows_and_keeps_their_counts() {
    if !can_run() {
        return;
    }
    let Some(pair) = Pair::new() else { return };
    let child: Child = pair
        .rocescope(&[
            "export",
            "--no-http",
            "--push",
            "-",
            "--interval",
            "0.3",
            "--flow-idle-timeout",
            "0.5",
            "-i",
            &pair.b,
            "--duration",
            "4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    pair.replay(&sample("rc-normal.pcap"));
    std::thread::sleep(Duration::from_millis(1500));
    pair.replay(&sample("nak-gobackn.pcap"));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let last: serde_json::Value = serde_json::from_str(out.lines().last().expect("lines")).unwrap();
    // rc-normal's flows were idle for over a second when nak-gobackn's arrived: no longer
    // tracked, but every packet is still in the flow series.
    let tracked = common::pushed_sum(&last, "rocescope_flows");
    let all = common::count(&sample("nak-gobackn.pcap"));
    let both = common::count(&sample("rc-normal.pcap")).roce_v2 + all.roce_v2;
    assert!(tracked <= 6.0, "only nak-gobackn's flows tracked: {tracked}");
    assert_eq!(common::pushed_sum(&last, "rocescope_flow_packets_total"), both as f64);
}
