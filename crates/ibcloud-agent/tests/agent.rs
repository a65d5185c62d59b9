//! The agent on fixture trees: cgroup v1/v2 layouts, IB sysfs counters,
//! `rdma statistic`/perfquery texts, the state file and guardian, config
//! errors, latency reports, and whole runs with a scripted test policy.
//! The real-cgroup test is tests/unit/test_agent_cgroup.py.

use ibcloud_agent::cgroup::{detect, parse_cpu_max, Cgroup, Limit, Version};
use ibcloud_agent::config::Config;
use ibcloud_agent::run::{run_policy, RunOptions};
use ibcloud_agent::sensors::ib::{
    delta, parse_perfquery, parse_rdma_statistic, Direction, IbSensor, Source,
};
use ibcloud_agent::sensors::latency::{LatencyInbox, MAX_LINE};
use ibcloud_agent::sensors::replay::Replay;
use ibcloud_agent::state::{self, Saved, State};
use ibcloud_agent::AgentError;
use ibcloud_control::capping::{CapChange, CapPolicy, PolicyRecord, VmSample};
use ibcloud_control::Time;
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibcloud-agent-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn put(p: &Path, s: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, s).unwrap();
}

/// A v2 tree: `root/cgroup.controllers` and `root/<vm>/{cpu.max,cpu.stat}`.
fn v2_tree(root: &Path, controllers: &str, vms: &[&str]) {
    put(&root.join("cgroup.controllers"), controllers);
    for v in vms {
        put(&root.join(v).join("cpu.max"), "max 100000\n");
        put(
            &root.join(v).join("cpu.stat"),
            "usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 7\nnr_throttled 2\nthrottled_usec 300\n",
        );
    }
}

/// A v1 tree with separate cpu and cpuacct mounts, as on this machine.
fn v1_tree(root: &Path, vms: &[&str]) {
    put(&root.join("cpu/cpu.cfs_quota_us"), "-1\n");
    put(&root.join("cpuacct/cpuacct.usage"), "0\n");
    for v in vms {
        put(&root.join("cpu").join(v).join("cpu.cfs_quota_us"), "-1\n");
        put(
            &root.join("cpu").join(v).join("cpu.cfs_period_us"),
            "100000\n",
        );
        put(
            &root.join("cpu").join(v).join("cpu.stat"),
            "nr_periods 10\nnr_throttled 4\nthrottled_time 123456\n",
        );
        put(
            &root.join("cpuacct").join(v).join("cpuacct.usage"),
            "999000\n",
        );
    }
}

#[test]
fn v2_cpu_max_on_a_fixture_tree() {
    let d = scratch("v2");
    v2_tree(&d, "cpuset cpu io memory pids\n", &["vm1"]);
    let h = detect(&d, None).unwrap();
    assert_eq!(h.version, Version::V2);
    let cg = Cgroup::open(&h, "vm1", true).unwrap();
    assert_eq!(
        cg.read_limit().unwrap(),
        Limit {
            quota_us: None,
            period_us: 100_000
        }
    );
    cg.set_cap(25).unwrap();
    assert_eq!(
        fs::read_to_string(d.join("vm1/cpu.max")).unwrap(),
        "25000 100000"
    );
    assert_eq!(cg.read_limit().unwrap().cap(), 25);
    // below the kernel's 1 ms minimum quota → raised to it
    fs::write(d.join("vm1/cpu.max"), "max 50000").unwrap();
    cg.set_cap(1).unwrap();
    assert_eq!(
        fs::read_to_string(d.join("vm1/cpu.max")).unwrap(),
        "1000 50000"
    );
    cg.set_cap(0).unwrap();
    assert_eq!(
        fs::read_to_string(d.join("vm1/cpu.max")).unwrap(),
        "max 50000"
    );
    assert_eq!(cg.usage_ns().unwrap(), 5_000_000);
    let t = cg.throttling().unwrap();
    assert_eq!(
        (t.nr_periods, t.nr_throttled, t.throttled_ns),
        (7, 2, 300_000)
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn cpu_max_parser() {
    assert_eq!(
        parse_cpu_max("max").unwrap(),
        Limit {
            quota_us: None,
            period_us: 100_000
        }
    );
    assert_eq!(parse_cpu_max("2000 10000\n").unwrap().quota_us, Some(2000));
    for bad in ["", "max 0", "x 100", "1 2 3", "100 y"] {
        assert!(parse_cpu_max(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn v1_quota_and_cpuacct_on_a_fixture_tree() {
    let d = scratch("v1");
    v1_tree(&d, &["grp/vm1"]);
    let h = detect(&d, None).unwrap();
    assert_eq!(h.version, Version::V1);
    let cg = Cgroup::open(&h, "/grp/vm1", true).unwrap();
    cg.set_cap(40).unwrap();
    assert_eq!(
        fs::read_to_string(d.join("cpu/grp/vm1/cpu.cfs_quota_us")).unwrap(),
        "40000"
    );
    // restoring a different period: unlimited first, then period, then quota
    cg.write_limit(&Limit {
        quota_us: Some(5000),
        period_us: 10_000,
    })
    .unwrap();
    assert_eq!(
        fs::read_to_string(d.join("cpu/grp/vm1/cpu.cfs_period_us")).unwrap(),
        "10000"
    );
    assert_eq!(
        fs::read_to_string(d.join("cpu/grp/vm1/cpu.cfs_quota_us")).unwrap(),
        "5000"
    );
    assert_eq!(cg.usage_ns().unwrap(), 999_000);
    assert_eq!(cg.throttling().unwrap().throttled_ns, 123_456);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn missing_versions_and_cgroups_are_named() {
    let d = scratch("missing");
    v1_tree(&d, &["vm1"]);
    let e = detect(&d, Some(Version::V2)).unwrap_err().to_string();
    assert!(e.contains("no cgroup v2 hierarchy"), "{e}");
    // a v2 hierarchy without the cpu controller (this machine's unified/)
    put(&d.join("unified/cgroup.controllers"), "\n");
    let e = detect(&d, Some(Version::V2)).unwrap_err().to_string();
    assert!(e.contains("has no cpu controller"), "{e}");
    let h = detect(&d, Some(Version::V1)).unwrap();
    let e = Cgroup::open(&h, "nosuch", true).unwrap_err();
    assert!(e.contains("cgroup 'nosuch' does not exist"), "{e}");
    assert!(Cgroup::open(&h, "../etc", true).unwrap_err().contains(".."));
    let empty = scratch("empty");
    let e = detect(&empty, None).unwrap_err().to_string();
    assert!(e.contains("no usable cgroup CPU controller"), "{e}");
    fs::remove_dir_all(&d).unwrap();
    fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn state_file_restore_and_guardian() {
    let d = scratch("state");
    v2_tree(&d, "cpu\n", &["a", "b"]);
    fs::write(d.join("b/cpu.max"), "30000 100000").unwrap();
    let h = detect(&d, None).unwrap();
    let cgs: Vec<Cgroup> = ["a", "b"]
        .iter()
        .map(|v| Cgroup::open(&h, v, true).unwrap())
        .collect();
    let st = State {
        pid: 4242,
        cgroups: cgs
            .iter()
            .zip(["a", "b"])
            .map(|(c, n)| Saved {
                vm: n.into(),
                version: c.version,
                cpu_dir: c.cpu_dir.clone(),
                acct_dir: c.acct_dir.clone(),
                original: c.read_limit().unwrap(),
            })
            .collect(),
        opensm: None,
    };
    let sf = d.join("agent.state");
    state::save(&sf, &st).unwrap();
    assert_eq!(state::load(&sf).unwrap().unwrap(), st);
    cgs[0].set_cap(10).unwrap();
    cgs[1].set_cap(20).unwrap();
    // clean exit announced: the guardian leaves everything alone
    assert_eq!(state::guard(&b"clean-exit\n"[..], &sf, 4242).unwrap(), None);
    assert_eq!(cgs[0].read_limit().unwrap().cap(), 10);
    // a state file of another agent: not ours to restore
    assert_eq!(state::guard(&b""[..], &sf, 1).unwrap(), None);
    // EOF without the marker (agent killed): restore
    let r = state::guard(&b""[..], &sf, 4242).unwrap().unwrap();
    assert_eq!(r.restored, vec!["a", "b"]);
    assert_eq!(
        fs::read_to_string(d.join("a/cpu.max")).unwrap(),
        "max 100000"
    );
    assert_eq!(
        fs::read_to_string(d.join("b/cpu.max")).unwrap(),
        "30000 100000"
    );
    assert!(!sf.exists(), "state file removed after a full restore");
    assert_eq!(state::restore(&sf).unwrap(), None);
    fs::write(&sf, "{not json").unwrap();
    assert!(state::load(&sf).unwrap_err().contains("corrupt"));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sysfs_counters_in_words_with_hw_counters() {
    let d = scratch("sysfs");
    let src = fixtures().join("sysfs/class/infiniband/mlx5_0/ports/1");
    let port = d.join("port");
    for sub in ["counters", "hw_counters"] {
        fs::create_dir_all(port.join(sub)).unwrap();
        for f in fs::read_dir(src.join(sub)).unwrap() {
            let f = f.unwrap();
            fs::copy(f.path(), port.join(sub).join(f.file_name())).unwrap();
        }
    }
    let mut s = IbSensor::new(
        Source::Sysfs {
            dir: port.join("counters"),
            requests: None,
        },
        Direction::Xmit,
        64,
    );
    assert_eq!(s.sample().unwrap(), (0, 0));
    put(&port.join("counters/port_xmit_data"), "1500\n");
    put(&port.join("counters/port_xmit_packets"), "13\n");
    assert_eq!(s.sample().unwrap(), (2000, 3), "500 words = 2000 bytes");
    let mut both = IbSensor::new(
        Source::Sysfs {
            dir: port.join("counters"),
            requests: Some("hw_counters/rx_write_requests".into()),
        },
        Direction::Both,
        64,
    );
    both.sample().unwrap();
    put(&port.join("counters/port_rcv_data"), "2100\n");
    put(&port.join("hw_counters/rx_write_requests"), "9\n");
    assert_eq!(both.sample().unwrap(), (400, 4));
    // the device goes away mid-run: a clear error
    fs::remove_file(port.join("counters/port_xmit_data")).unwrap();
    let e = s.sample().unwrap_err();
    assert!(e.contains("disappeared"), "{e}");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn counter_wrap_and_saturation() {
    assert_eq!(delta(u64::MAX - 1, 2, 64), Ok(4));
    assert_eq!(delta(0xFFFF_FFF0, 0x10, 32), Ok(0x20));
    assert!(delta(5, u32::MAX as u64, 32)
        .unwrap_err()
        .contains("saturated"));
}

#[test]
fn rdma_statistic_parser() {
    let t = fs::read_to_string(fixtures().join("rdma_statistic.txt")).unwrap();
    let r = parse_rdma_statistic(&t).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].link, "mlx5_0/1");
    assert_eq!(r[0].counters["rx_write_requests"], 1234);
    assert_eq!(r[0].counters["out_of_sequence"], 3);
    let t = fs::read_to_string(fixtures().join("rdma_statistic_qp.txt")).unwrap();
    let r = parse_rdma_statistic(&t).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].attrs["qp-type"], "RC");
    assert_eq!(r[0].attrs["pid"], "30818");
    assert_eq!(r[0].attrs["LQPN"], "<178>");
    assert_eq!(r[1].counters["rx_write_requests"], 12);
    for (bad, what) in [
        ("foo 1 2\n", "line 1"),
        ("link mlx5_0 x 1\n", "DEV/PORT"),
        ("link a/1 x\n", "no value"),
    ] {
        let e = parse_rdma_statistic(bad).unwrap_err();
        assert!(e.contains(what), "{bad:?}: {e}");
    }
}

#[test]
fn perfquery_parser_and_32_bit_saturation() {
    let x =
        parse_perfquery(&fs::read_to_string(fixtures().join("perfquery_x.txt")).unwrap()).unwrap();
    assert_eq!(x["PortXmitData"], 81_920_000);
    assert_eq!(x["CounterSelect"], 0);
    let p =
        parse_perfquery(&fs::read_to_string(fixtures().join("perfquery_32.txt")).unwrap()).unwrap();
    assert_eq!(p["PortXmitData"], u32::MAX as u64);
    let e = parse_perfquery("PortXmitData:.....12x\n").unwrap_err();
    assert!(e.contains("line 1") && e.contains("PortXmitData"), "{e}");
    assert!(parse_perfquery("# nothing\n").is_err());
}

#[test]
fn command_sources_through_fixture_scripts() {
    // stand-ins for `perfquery -x` and `rdma statistic`: `cat` the fixture
    let pq = Source::Perfquery {
        command: vec![
            "cat".into(),
            fixtures().join("perfquery_x.txt").display().to_string(),
        ],
    };
    let c = pq.read(Direction::Xmit).unwrap();
    assert_eq!((c.data * pq.unit(), c.packets), (81_920_000 * 4, 20_000));
    let rd = Source::Rdma {
        command: vec![
            "cat".into(),
            fixtures()
                .join("rdma_statistic_qp.txt")
                .display()
                .to_string(),
        ],
        bytes_counter: "rx_read_requests".into(),
        requests_counter: "rx_write_requests".into(),
    };
    let c = rd.read(Direction::Xmit).unwrap();
    assert_eq!((c.data, c.packets), (1, 4108));
    let bad = Source::Perfquery {
        command: vec!["false".into()],
    };
    assert!(bad.read(Direction::Xmit).unwrap_err().contains("failed"));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,200}") {
            let _ = parse_rdma_statistic(&s);
            let _ = parse_perfquery(&s);
            let _ = parse_cpu_max(&s);
        }

        #[test]
        fn rdma_round_trip(vals in proptest::collection::btree_map("[a-z_]{1,12}", any::<u64>(), 1..8), port in 1u8..3) {
            let vals: std::collections::BTreeMap<String, u64> = vals.into_iter()
                .filter(|(k, _)| k != "pid" && k != "cntn").collect();
            let body: Vec<String> = vals.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let text = format!("link mlx5_0/{port} {}\n", body.join(" "));
            let r = parse_rdma_statistic(&text).unwrap();
            prop_assert_eq!(&r[0].counters, &vals);
        }

        #[test]
        fn perfquery_round_trip(vals in proptest::collection::btree_map("[A-Z][A-Za-z]{1,20}", any::<u64>(), 1..10)) {
            let text: String = vals.iter().map(|(k, v)| format!("{k}:{}{v}\n", ".".repeat(30 - k.len().min(29)))).collect();
            prop_assert_eq!(parse_perfquery(&text).unwrap(), vals);
        }

        #[test]
        fn delta_inverts_wrapping_add(old in any::<u64>(), inc in 0u64..(1 << 31), bits in prop_oneof![Just(32u32), Just(64u32)]) {
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let old = old & mask;
            let new = old.wrapping_add(inc) & mask;
            prop_assume!(!(bits == 32 && new == u32::MAX as u64));
            prop_assert_eq!(delta(old, new, bits).unwrap(), inc);
        }

        #[test]
        fn config_never_panics(s in "\\PC{0,300}") {
            let _ = Config::parse(Path::new("AGENT.toml"), &s);
        }

        #[test]
        fn damaged_configs_are_errors_with_a_line(cut in 0usize..200, junk in "[\\[\\]=\"'a-z0-9 .\n-]{0,12}") {
            let good = "[agent]\nperiod = 0.5\nstate-file = 's'\n[[vm]]\nname = 'vm1'\ncgroup = 'm/vm1'\nlatency = true\n[policy]\nepoch = \"1s\"\n";
            let at = cut.min(good.len());
            let text = format!("{}{junk}{}", &good[..at], &good[at..]);
            if let Err(e) = Config::parse(Path::new("AGENT.toml"), &text) {
                prop_assert!(e.starts_with("AGENT.toml"), "{}", e);
            }
        }

        #[test]
        fn latency_lines_never_panic(s in "\\PC{0,300}") {
            let inbox = LatencyInbox::new(&[("vm1".into(), true)]);
            inbox.push_line(&s);
            let t = inbox.take();
            prop_assert_eq!(t.malformed + t.per_vm[0].len() as u64, 1);
        }
    }
}

#[test]
fn latency_reports_and_malformed_ones() {
    let inbox = LatencyInbox::new(&[("vm1".into(), true), ("vm2".into(), false)]);
    let long = format!("vm1 {}\n", "1".repeat(MAX_LINE + 10));
    let input = format!("vm1 209.5\nvm1 210\r\n\nvm1\nvm2 5\nvm9 1\nvm1 -3\nvm1 nan\nvm1 inf\nvm1 12 13\n{long}vm1 7\n");
    inbox.serve(input.as_bytes());
    let t = inbox.take();
    assert_eq!(t.per_vm[0], vec![209.5, 210.0, 7.0]);
    assert_eq!(t.malformed, 8);
    assert_eq!(t.errors.len(), 5);
    assert!(
        t.errors
            .iter()
            .any(|e| e.contains("not a latency reporter")),
        "{:?}",
        t.errors
    );
    assert!(
        t.errors.iter().any(|e| e.contains("unknown VM 'vm9'")),
        "{:?}",
        t.errors
    );
    assert_eq!(inbox.take().malformed, 0, "take() empties the inbox");
}

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("AGENT.toml");
    fs::write(&p, body).unwrap();
    p
}

fn config_err(body: &str) -> String {
    let d = scratch("cfg");
    let p = write_config(&d, body);
    let e = Config::load(&p).unwrap_err();
    fs::remove_dir_all(&d).unwrap();
    e
}

#[test]
fn config_errors_name_file_line_and_problem() {
    let cases = [
        ("[agent]\nperiod = 1\nbogus = 2\n", ":3:", "bogus"),
        (
            "[agent]\nperiod = -1.0\n[[vm]]\nname='a'\ncgroup='a'\n",
            ":2:",
            "between 0.01 and 3600",
        ),
        (
            "[agent]\ncgroup-version = \"v3\"\n[[vm]]\nname='a'\ncgroup='a'\n",
            ":2:",
            "v3",
        ),
        ("[agent]\n", "AGENT.toml:", "no [[vm]]"),
        (
            "[[vm]]\nname='a'\ncgroup='a'\n[[vm]]\nname='a'\ncgroup='b'\n",
            ":5:",
            "duplicate VM name",
        ),
        ("[[vm]]\nname='a'\ncgroup='../x'\n", ":3:", "or '..'"),
        ("[[vm]]\nname='a'\ncgroup='.'\n", ":3:", "without '.' or"),
        (
            "[[vm]]\nname='a'\n\ncgroup='a'\nib-source='carrier-pigeon'\n",
            ":5:",
            "carrier-pigeon",
        ),
        (
            "[[vm]]\nname='a'\ncgroup='a'\ncounters='/nonexistent'\n",
            ":4:",
            "no port_xmit_data",
        ),
        (
            "[[vm]]\nname='a'\ncgroup='a'\ncounter-bits=16\n",
            ":4:",
            "32 or 64",
        ),
        (
            "[[vm]]\nname='a'\ncgroup='a'\nib-source='perfquery'\n",
            ":1:",
            "needs ib-device",
        ),
        ("[[vm]]\nname='a'\n", ":1:", "cgroup"),
        (
            "[[vm]]\nname='a'\ncgroup='a'\nlatency='yes'\n",
            ":4:",
            "bool",
        ),
        ("[[vm]\n", ":1:", ""),
    ];
    for (body, line, what) in cases {
        let e = config_err(body);
        assert!(
            e.contains("AGENT.toml") && e.contains(line) && e.contains(what),
            "{body:?} → {e}"
        );
    }
}

#[test]
fn config_reads_everything() {
    let d = scratch("cfgok");
    let counters = fixtures().join("sysfs/class/infiniband/mlx5_0/ports/1/counters");
    let p = write_config(
        &d,
        &format!(
            "[agent]\nperiod = 0.5\nstate-file = 'st'\nsocket = 'lat.sock'\ndry-run = true\ncgroup-version = 'v2'\nsteps = 3\n\
             [[vm]]\nname = 'vm1'\ncgroup = '/m/vm1/'\ncounters = '{}'\nrequests-counter = 'hw_counters/rx_write_requests'\nlatency = true\n\
             [[vm]]\nname = 'vm2'\ncgroup = 'm/vm2'\nib-source = 'perfquery'\nib-device = 'mlx5_0'\nib-port = 2\n\
             [policy]\nepoch = 1.0\nmode = 'repaired'\n",
            counters.display()
        ),
    );
    let c = Config::load(&p).unwrap();
    assert_eq!(c.period_s, Some(0.5));
    assert_eq!(c.state_file, d.join("st"));
    assert_eq!(c.socket, Some(d.join("lat.sock")));
    assert!(c.dry_run);
    assert_eq!(c.cgroup_version, Some(Version::V2));
    assert_eq!(c.steps, Some(3));
    assert_eq!(c.vms[0].cgroup, "m/vm1");
    assert!(c.vms[0].latency && !c.vms[1].latency);
    match &c.vms[1].ib {
        Some((Source::Perfquery { command }, Direction::Xmit, 64)) => {
            assert_eq!(command.join(" "), "perfquery -x -C mlx5_0 -P 2")
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(c.policy["mode"], "repaired");
    assert_eq!(c.policy_line, 20);
    assert_eq!(c.policy_line_of("freemarket: unknown parameter `mode`"), 22);
    assert_eq!(c.policy_line_of("epoch: cannot read duration 'x'"), 21);
    assert_eq!(c.policy_line_of("something else"), 20);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn replay_feeds_and_their_errors() {
    let d = scratch("replay");
    let vms = vec!["vm1".to_string(), "vm2".to_string()];
    let j = d.join("f.jsonl");
    fs::write(&j, "{\"period\":0,\"vm\":\"vm1\",\"bytes\":10}\n\n{\"period\":2,\"vm\":\"vm2\",\"latencies_us\":[1.5,2]}\n").unwrap();
    let r = Replay::load(&j, &vms).unwrap();
    assert_eq!(r.last_period, 2);
    assert_eq!(r.rows(0)[0].1.bytes, Some(10));
    assert!(r.rows(1).is_empty());
    assert_eq!(r.rows(2)[0].0, 1);
    let c = d.join("f.csv");
    fs::write(
        &c,
        "period,vm,bytes,cpu_pct,latencies_us\n0,vm2,5,,1;2.5\n1,vm1,,50,\n",
    )
    .unwrap();
    let r = Replay::load(&c, &vms).unwrap();
    assert_eq!(r.rows(0)[0].1.latencies_us, Some(vec![1.0, 2.5]));
    assert_eq!(r.rows(1)[0].1.cpu_pct, Some(50.0));
    for (name, body, what) in [
        (
            "a.jsonl",
            "{\"period\":0,\"vm\":\"vm3\"}\n",
            ":1: unknown VM 'vm3'",
        ),
        (
            "b.jsonl",
            "\n{\"period\":0,\"vm\":\"vm1\",\"colour\":1}\n",
            ":2:",
        ),
        ("c.csv", "period,vm,speed\n", ":1: unknown column 'speed'"),
        ("d.csv", "period,vm,cpu_pct\n0,vm1,-4\n", ":2: cpu_pct -4"),
        ("e.csv", "period,vm,bytes\n0,vm1\n", ":2: 2 fields"),
        ("f.jsonl", "", "no rows"),
        (
            "g.jsonl",
            "{\"period\":0,\"vm\":\"vm1\",\"latencies_us\":[1e999]}\n",
            ":1:",
        ),
    ] {
        let p = d.join(name);
        fs::write(&p, body).unwrap();
        let e = Replay::load(&p, &vms).unwrap_err();
        assert!(e.contains(what), "{name}: {e}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Caps VM `i` at `script[step][i]` (0 = uncapped), recording what it saw.
#[derive(Debug)]
struct Scripted {
    script: Vec<Vec<u32>>,
    k: usize,
    seen: Vec<Vec<VmSample>>,
    records: Vec<PolicyRecord>,
}

impl CapPolicy for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    fn period(&self) -> Time {
        20_000_000_000 // 20 ms
    }
    fn step(&mut self, _now: Time, obs: &[VmSample]) -> Vec<CapChange> {
        self.seen.push(obs.to_vec());
        let want = &self.script[self.k.min(self.script.len() - 1)];
        self.k += 1;
        obs.iter()
            .enumerate()
            .filter(|(i, s)| s.cap != want[*i])
            .map(|(i, _)| CapChange {
                vm: i,
                cap: want[i],
            })
            .collect()
    }
    fn records(&self) -> &[PolicyRecord] {
        &self.records
    }
    fn clear_records(&mut self) {
        self.records.clear();
    }
    fn report(&self, _: &[String]) -> serde_json::Value {
        serde_json::json!({"steps": self.k, "bytes_seen": self.seen.iter().map(|s| s[0].bytes).collect::<Vec<_>>()})
    }
}

fn scripted(script: Vec<Vec<u32>>) -> Box<dyn CapPolicy> {
    Box::new(Scripted {
        script,
        k: 0,
        seen: Vec::new(),
        records: Vec::new(),
    })
}

#[test]
fn a_whole_run_on_a_v2_fixture_tree_restores_at_the_end() {
    let d = scratch("run");
    let root = d.join("cg");
    v2_tree(&root, "cpu\n", &["vm1", "vm2"]);
    fs::write(root.join("vm2/cpu.max"), "70000 100000").unwrap();
    fs::write(d.join("feed.jsonl"), "{\"period\":0,\"vm\":\"vm1\",\"bytes\":4096}\n{\"period\":1,\"vm\":\"vm1\",\"bytes\":8192}\n").unwrap();
    let p = write_config(
        &d,
        "[agent]\nperiod = 0.02\nstate-file = 'agent.state'\ncgroup-root = 'cg'\nreplay = 'feed.jsonl'\nlog = 'actions.jsonl'\n\
         [[vm]]\nname = 'vm1'\ncgroup = 'vm1'\n[[vm]]\nname = 'vm2'\ncgroup = 'vm2'\n",
    );
    let cfg = Config::load(&p).unwrap();
    let s = run_policy(
        &cfg,
        scripted(vec![vec![25, 0], vec![50, 10]]),
        &RunOptions::default(),
        &mut || false,
    )
    .unwrap();
    assert_eq!(s.ended, "replay-end");
    assert_eq!(s.steps, 2);
    assert_eq!(s.changes, 4, "vm1 0→25→50, vm2 70→0→10");
    assert_eq!(s.report["bytes_seen"], serde_json::json!([4096, 8192]));
    assert_eq!(s.restored.as_ref().unwrap().restored, vec!["vm1", "vm2"]);
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );
    assert_eq!(
        fs::read_to_string(root.join("vm2/cpu.max")).unwrap(),
        "70000 100000"
    );
    assert!(!d.join("agent.state").exists());
    let log = fs::read_to_string(d.join("actions.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2]["vm"], "vm1");
    assert_eq!(
        (lines[2]["cap_before"].as_u64(), lines[2]["cap"].as_u64()),
        (Some(25), Some(50))
    );
    assert_eq!(lines[1]["cap_before"], 70);

    // dry run: nothing written, no state file, the log says what it would do
    let s = run_policy(
        &cfg,
        scripted(vec![vec![25, 0]]),
        &RunOptions {
            dry_run: true,
            steps: Some(1),
            ..Default::default()
        },
        &mut || false,
    )
    .unwrap();
    assert!(s.dry_run && s.changes == 2 && s.ended == "steps");
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );

    // a stop request ends the run at once, caps restored
    let s = run_policy(
        &cfg,
        scripted(vec![vec![5, 5]]),
        &RunOptions::default(),
        &mut || true,
    )
    .unwrap();
    assert_eq!((s.ended.as_str(), s.steps), ("stopped", 0));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_sensor_that_disappears_mid_run_restores_and_fails_clearly() {
    let d = scratch("gone");
    let root = d.join("cg");
    v2_tree(&root, "cpu\n", &["vm1"]);
    let counters = d.join("ib/counters");
    for f in ["port_xmit_data", "port_xmit_packets"] {
        put(&counters.join(f), "0\n");
    }
    let p = write_config(
        &d,
        "[agent]\nperiod = 0.02\nstate-file = 'agent.state'\ncgroup-root = 'cg'\n\
         [[vm]]\nname = 'vm1'\ncgroup = 'vm1'\ncounters = 'ib/counters'\n",
    );
    let cfg = Config::load(&p).unwrap();
    let mut n = 0;
    let mut stop = || {
        n += 1;
        if n == 3 {
            let _ = fs::remove_file(counters.join("port_xmit_data"));
        }
        false
    };
    let e = run_policy(
        &cfg,
        scripted(vec![vec![30]]),
        &RunOptions::default(),
        &mut stop,
    )
    .unwrap_err();
    match e {
        AgentError::Runtime(m) => {
            assert!(m.contains("disappeared") && m.contains("restored"), "{m}")
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );
    assert!(!d.join("agent.state").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_stale_state_file_is_recovered_and_bad_setups_are_input_errors() {
    let d = scratch("stale");
    let root = d.join("cg");
    v2_tree(&root, "cpu\n", &["vm1"]);
    fs::write(root.join("vm1/cpu.max"), "12000 100000").unwrap(); // left capped by a crashed agent
    let h = detect(&root, None).unwrap();
    let cg = Cgroup::open(&h, "vm1", true).unwrap();
    let dead_pid = 0x3FFF_FFF0; // above pid_max: never alive
    state::save(
        &d.join("agent.state"),
        &State {
            pid: dead_pid,
            cgroups: vec![Saved {
                vm: "vm1".into(),
                version: cg.version,
                cpu_dir: cg.cpu_dir.clone(),
                acct_dir: cg.acct_dir.clone(),
                original: Limit {
                    quota_us: None,
                    period_us: 100_000,
                },
            }],
            opensm: None,
        },
    )
    .unwrap();
    let p = write_config(
        &d,
        "[agent]\nperiod = 0.02\nstate-file = 'agent.state'\ncgroup-root = 'cg'\n[[vm]]\nname = 'vm1'\ncgroup = 'vm1'\n",
    );
    let cfg = Config::load(&p).unwrap();
    let s = run_policy(
        &cfg,
        scripted(vec![vec![0]]),
        &RunOptions {
            steps: Some(1),
            ..Default::default()
        },
        &mut || false,
    )
    .unwrap();
    assert_eq!(s.recovered.unwrap().restored, vec!["vm1"]);
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );

    // a cgroup that does not exist: an input error naming the line
    let p = write_config(
        &d,
        "[agent]\nstate-file = 's'\ncgroup-root = 'cg'\n[[vm]]\nname = 'x'\ncgroup = 'nope'\n",
    );
    let cfg = Config::load(&p).unwrap();
    match run_policy(
        &cfg,
        scripted(vec![vec![0]]),
        &RunOptions::default(),
        &mut || false,
    )
    .unwrap_err()
    {
        AgentError::Input(m) => assert!(
            m.contains("AGENT.toml:6:") && m.contains("does not exist"),
            "{m}"
        ),
        o => panic!("{o:?}"),
    }
    // a version the host lacks
    let p = write_config(
        &d,
        "[agent]\ncgroup-version = 'v1'\ncgroup-root = 'cg'\n[[vm]]\nname = 'x'\ncgroup = 'vm1'\n",
    );
    let cfg = Config::load(&p).unwrap();
    match run_policy(
        &cfg,
        scripted(vec![vec![0]]),
        &RunOptions::default(),
        &mut || false,
    )
    .unwrap_err()
    {
        AgentError::Input(m) => assert!(
            m.contains("AGENT.toml:2:") && m.contains("no cgroup v1 cpu controller"),
            "{m}"
        ),
        o => panic!("{o:?}"),
    }
    // an agent period that contradicts the policy's interval
    let p = write_config(
        &d,
        "[agent]\ncgroup-root = 'cg'\nperiod = 1.0\n[[vm]]\nname = 'x'\ncgroup = 'vm1'\n",
    );
    let cfg2 = Config::load(&p).unwrap();
    match run_policy(
        &cfg2,
        scripted(vec![vec![0]]),
        &RunOptions::default(),
        &mut || false,
    )
    .unwrap_err()
    {
        AgentError::Input(m) => assert!(
            m.contains("AGENT.toml:3:") && m.contains("steps every 0.02 s"),
            "{m}"
        ),
        o => panic!("{o:?}"),
    }
    // an unknown policy
    let e =
        ibcloud_agent::run::run(&cfg, "nosuch", &RunOptions::default(), &mut || false).unwrap_err();
    assert!(
        matches!(&e, AgentError::Input(m) if m.contains("unknown policy")),
        "{e:?}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn latency_reports_over_a_real_unix_socket() {
    use ibcloud_agent::sensors::latency::LatencySocket;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let d = scratch("sock");
    let path = d.join("lat.sock");
    fs::write(&path, "").unwrap(); // a stale file where the socket goes: replaced
    let inbox = LatencyInbox::new(&[("vm1".into(), true)]);
    let sock = LatencySocket::bind(&path, inbox.clone()).unwrap();
    let e = LatencySocket::bind(&path, inbox.clone()).unwrap_err();
    assert!(e.contains("in use"), "{e}");
    for _ in 0..2 {
        let mut c = UnixStream::connect(&path).unwrap();
        c.write_all(b"vm1 209\nvm1 oops\nvm1 211.5\n").unwrap();
    }
    let mut got = Vec::new();
    let mut malformed = 0;
    for _ in 0..200 {
        let t = inbox.take();
        got.extend(t.per_vm[0].iter().copied());
        malformed += t.malformed;
        if got.len() == 4 && malformed == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    got.sort_by(f64::total_cmp);
    assert_eq!(got, vec![209.0, 209.0, 211.5, 211.5]);
    assert_eq!(malformed, 2);
    drop(sock);
    assert!(
        !path.exists(),
        "the socket file is removed with the listener"
    );
    fs::remove_dir_all(&d).unwrap();
}

/// Every registered policy runs in the agent on a v2 fixture tree from a
/// replay feed: an interferer (vm1, 2 MB per interval, 90 % CPU) beside a
/// latency-sensitive VM (vm2, small I/O, latencies rising), then restores.
#[test]
fn every_registered_policy_runs_in_the_agent() {
    for (kind, params) in [
        ("fares", "period = \"20ms\"\nhigh = [\"vm2\"]\nlow = [\"vm1\"]\nfairness = \"degradation\"\nratio = \"5:1\"\ncpus = 1\n"),
        ("freemarket", "interval = \"20ms\"\nepoch = \"200ms\"\nlink-bytes-per-s = 1048576.0\n"),
        ("ioshares", "interval = \"20ms\"\nepoch = \"200ms\"\n"),
    ] {
        let d = scratch(&format!("pol-{kind}"));
        let root = d.join("cg");
        v2_tree(&root, "cpu\n", &["vm1", "vm2"]);
        let mut feed = String::new();
        for k in 0..15 {
            feed += &format!("{{\"period\":{k},\"vm\":\"vm1\",\"bytes\":2097152,\"requests\":1,\"cpu_pct\":90}}\n");
            feed += &format!(
                "{{\"period\":{k},\"vm\":\"vm2\",\"bytes\":4096,\"requests\":40,\"cpu_pct\":20,\"latencies_us\":[{}]}}\n",
                209 + 40 * k
            );
        }
        fs::write(d.join("feed.jsonl"), feed).unwrap();
        let p = write_config(
            &d,
            &format!(
                "[agent]\nstate-file = 'agent.state'\ncgroup-root = 'cg'\nreplay = 'feed.jsonl'\nlog = 'a.jsonl'\n\
                 [[vm]]\nname = 'vm1'\ncgroup = 'vm1'\n[[vm]]\nname = 'vm2'\ncgroup = 'vm2'\nlatency = true\n[policy]\n{params}"
            ),
        );
        let cfg = Config::load(&p).unwrap();
        let s = ibcloud_agent::run::run(&cfg, kind, &RunOptions::default(), &mut || false)
            .unwrap_or_else(|e| panic!("{kind}: {e:?}"));
        assert_eq!((s.policy.as_str(), s.steps, s.ended.as_str()), (kind, 15, "replay-end"), "{kind}");
        assert_eq!(fs::read_to_string(root.join("vm1/cpu.max")).unwrap(), "max 100000", "{kind}");
        let log = fs::read_to_string(d.join("a.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 30, "{kind}");
        if kind == "freemarket" {
            // the policy's own records ride along: the balance falls step by step
            let bal: Vec<f64> = log
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|v| v["vm"] == "vm2")
                .map(|v| v["balance"].as_f64().unwrap())
                .collect();
            assert!(bal[0] > bal[3], "{bal:?}");
        }
        eprintln!("{kind}: {} cap changes", s.changes);
        fs::remove_dir_all(&d).unwrap();
    }
}

/// A quota write that fails mid-run stops the agent; the VM whose cgroup
/// still works is restored, the broken one is reported and the state file
/// kept for `--restore`.
#[test]
fn a_refused_write_stops_restores_what_it_can_and_keeps_the_state_file() {
    let d = scratch("refused");
    let root = d.join("cg");
    v2_tree(&root, "cpu\n", &["vm1", "vm2"]);
    let p = write_config(
        &d,
        "[agent]\nperiod = 0.02\nstate-file = 'agent.state'\ncgroup-root = 'cg'\n\
         [[vm]]\nname = 'vm1'\ncgroup = 'vm1'\n[[vm]]\nname = 'vm2'\ncgroup = 'vm2'\n",
    );
    let cfg = Config::load(&p).unwrap();
    let vm2_max = root.join("vm2/cpu.max");
    let mut n = 0;
    let mut stop = || {
        n += 1;
        if n == 3 {
            // cpu.max becomes a directory: every write to it fails
            fs::remove_file(&vm2_max).unwrap();
            fs::create_dir(&vm2_max).unwrap();
        }
        false
    };
    let e = run_policy(
        &cfg,
        scripted(vec![vec![40, 0], vec![40, 20]]),
        &RunOptions::default(),
        &mut stop,
    )
    .unwrap_err();
    match e {
        AgentError::Runtime(m) => {
            assert!(m.contains("VM 'vm2'") && m.contains("cannot"), "{m}");
            assert!(
                m.contains("could not restore") && m.contains("--restore"),
                "{m}"
            );
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );
    assert!(
        d.join("agent.state").exists(),
        "kept: vm2 is not restored yet"
    );
    // the operator repairs the cgroup, then --restore finishes the job
    fs::remove_dir(&vm2_max).unwrap();
    fs::write(&vm2_max, "20000 100000").unwrap();
    let r = ibcloud_agent::run::restore_from(&cfg).unwrap().unwrap();
    assert_eq!(r.restored, vec!["vm1", "vm2"]);
    assert_eq!(fs::read_to_string(&vm2_max).unwrap(), "max 100000");
    assert!(!d.join("agent.state").exists());
    fs::remove_dir_all(&d).unwrap();
}

/// A policy that panics (a bug) still leaves the host as it found it.
#[test]
fn a_panicking_policy_is_an_error_and_the_caps_are_restored() {
    #[derive(Debug)]
    struct Panics(Vec<PolicyRecord>, usize);
    impl CapPolicy for Panics {
        fn name(&self) -> String {
            "panics".into()
        }
        fn period(&self) -> Time {
            20_000_000_000
        }
        fn step(&mut self, _: Time, _: &[VmSample]) -> Vec<CapChange> {
            self.1 += 1;
            if self.1 == 3 {
                panic!("policy bug");
            }
            vec![CapChange {
                vm: 0,
                cap: 10 * self.1 as u32,
            }]
        }
        fn records(&self) -> &[PolicyRecord] {
            &self.0
        }
        fn clear_records(&mut self) {
            self.0.clear();
        }
        fn report(&self, _: &[String]) -> serde_json::Value {
            serde_json::Value::Null
        }
    }
    let d = scratch("panic");
    let root = d.join("cg");
    v2_tree(&root, "cpu\n", &["vm1"]);
    let p = write_config(&d, "[agent]\nstate-file = 'agent.state'\ncgroup-root = 'cg'\n[[vm]]\nname = 'vm1'\ncgroup = 'vm1'\n");
    let cfg = Config::load(&p).unwrap();
    let e = run_policy(
        &cfg,
        Box::new(Panics(Vec::new(), 0)),
        &RunOptions::default(),
        &mut || false,
    )
    .unwrap_err();
    assert!(
        matches!(&e, AgentError::Runtime(m) if m.contains("panicked: policy bug") && m.contains("restored")),
        "{e:?}"
    );
    assert_eq!(
        fs::read_to_string(root.join("vm1/cpu.max")).unwrap(),
        "max 100000"
    );
    assert!(!d.join("agent.state").exists());
    fs::remove_dir_all(&d).unwrap();
}
