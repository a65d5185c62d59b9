//! DRX and Sphinx in the agent: DRX's caps reach cgroup files from a
//! replayed CQE feed and come back at the end; the opensm.conf composer;
//! `[opensm]` and policy errors name file and line. The run against a
//! real OpenSM on ibsim is tests/interop/test_agent_opensm.py.

use ibcloud_agent::config::Config;
use ibcloud_agent::opensm::{compose, managed};
use ibcloud_agent::run::{run, RunOptions};
use ibcloud_agent::AgentError;
use std::fs;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ibcloud-agent-fab-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn v2_tree(root: &Path, vms: &[&str]) {
    fs::create_dir_all(root).unwrap();
    fs::write(root.join("cgroup.controllers"), "cpu\n").unwrap();
    for v in vms {
        fs::create_dir_all(root.join(v)).unwrap();
        fs::write(root.join(v).join("cpu.max"), "max 100000").unwrap();
        fs::write(
            root.join(v).join("cpu.stat"),
            "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
        )
        .unwrap();
    }
}

const DRX: &str = r#"[agent]
state-file = "agent.state"
cgroup-root = "cg"
replay = "feed.jsonl"
log = "actions.jsonl"

[[vm]]
name = "nectere"
cgroup = "nectere"

[[vm]]
name = "hadoop"
cgroup = "hadoop"

[policy]
policy = "eb-dist"
interval = "20ms"
epoch = "2s"
message-latency = "0.1ms"
vmes = { nect = { vms = ["nectere"], g = 1000.0, io-min = 1000.0, priority = "high" }, bulk = { vms = ["hadoop"], g = 20000.0, io-min = 100.0, priority = "low" } }
"#;

#[test]
fn drx_caps_the_bulk_vm_when_nectere_misses_its_sla_and_restores() {
    let d = scratch("drx");
    v2_tree(&d.join("cg"), &["nectere", "hadoop"]);
    // 20 ms intervals: Nectere's SLA is 1000 CQE/s = 20 per interval.
    // Period 0 meets it; from period 1 on it gets 10 (PD 0.5 > 15 %).
    let mut feed = String::new();
    for k in 0..6 {
        let n = if k == 0 { 20 } else { 10 };
        feed += &format!("{{\"period\":{k},\"vm\":\"nectere\",\"requests\":{n}}}\n");
        feed += &format!("{{\"period\":{k},\"vm\":\"hadoop\",\"requests\":400}}\n");
    }
    fs::write(d.join("feed.jsonl"), feed).unwrap();
    fs::write(d.join("AGENT.toml"), DRX).unwrap();
    let cfg = Config::load(&d.join("AGENT.toml")).unwrap();
    let s = run(&cfg, "drx", &RunOptions::default(), &mut || false).unwrap();
    assert_eq!((s.ended.as_str(), s.steps), ("replay-end", 6));
    assert_eq!(s.policy, "drx-eb-dist");
    assert!(s.fabric.is_none(), "a pricing policy needs no OpenSM");
    let rows: Vec<serde_json::Value> = fs::read_to_string(d.join("actions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of =
        |vm: &str| -> Vec<&serde_json::Value> { rows.iter().filter(|r| r["vm"] == vm).collect() };
    let (nec, had) = (of("nectere"), of("hadoop"));
    // Nectere is never capped; its violation is logged at step 1.
    assert!(nec.iter().all(|r| r["cap"] == 0));
    let ev = nec[1]["drx_events"].as_array().expect("events at step 1");
    assert!(ev
        .iter()
        .any(|e| e["kind"] == "violation" && (e["pd"].as_f64().unwrap() - 0.5).abs() < 1e-9));
    assert_eq!(had[0]["cap"], 0);
    // Hadoop's cap falls below 100 % at the violation's step (the PM and
    // HA run in-process), is what DRX decided (rounded) and keeps falling.
    let cap1 = had[1]["cap"].as_u64().unwrap();
    let drx1 = had[1]["drx_cap_pct"].as_f64().unwrap();
    assert!(cap1 > 0 && cap1 < 100, "{cap1}");
    assert_eq!(cap1, drx1.round() as u64);
    assert!(had[1]["price"].as_f64().unwrap() > 1.0, "bulk's price rose");
    let last = had.last().unwrap()["cap"].as_u64().unwrap();
    assert!(last > 0 && last < cap1, "{last} after {cap1}");
    // The caps were written (the log says changed) and restored at exit.
    assert!(had[1]["changed"].as_bool().unwrap());
    assert_eq!(
        fs::read_to_string(d.join("cg/hadoop/cpu.max")).unwrap(),
        "max 100000"
    );
    assert_eq!(
        s.restored.as_ref().unwrap().restored,
        vec!["nectere", "hadoop"]
    );
    assert_eq!(s.report["response"]["violations"].as_u64().unwrap(), 5);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hardware_drx_policies_need_opensm_and_bad_parameters_name_their_line() {
    let d = scratch("drx-bad");
    v2_tree(&d.join("cg"), &["nectere", "hadoop"]);
    fs::write(d.join("feed.jsonl"), "").unwrap();
    let err = |text: &str, kind: &str| -> String {
        fs::write(d.join("AGENT.toml"), text).unwrap();
        let cfg = Config::load(&d.join("AGENT.toml")).unwrap();
        match run(
            &cfg,
            kind,
            &RunOptions {
                dry_run: true,
                ..Default::default()
            },
            &mut || false,
        ) {
            Err(AgentError::Input(m)) => m,
            other => panic!("expected an input error, got {other:?}"),
        }
    };
    let file = d.join("AGENT.toml").display().to_string();
    let line =
        |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let m = err(&DRX.replace("\"eb-dist\"", "\"drxmaxq\""), "drx");
    assert!(
        m.starts_with(&format!("{file}:{}:", line(DRX, "[policy]"))) && m.contains("[opensm]"),
        "{m}"
    );
    let bogus = DRX.replace("epoch = \"2s\"", "epoch = \"2s\"\nbogus = 1");
    let m = err(&bogus, "drx");
    assert!(
        m.starts_with(&format!("{file}:{}:", line(&bogus, "bogus"))) && m.contains("bogus"),
        "{m}"
    );
    let m = err(
        &DRX.replace("vms = [\"hadoop\"]", "vms = [\"hadop\"]"),
        "drx",
    );
    assert!(m.contains("hadop"), "{m}");
    let m = err(DRX, "sphinx");
    assert!(m.contains("flows"), "{m}");
    let m = err(DRX, "nosuch");
    assert!(
        m.contains("unknown policy 'nosuch'") && m.contains("sphinx"),
        "{m}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn opensm_section_errors_name_file_and_line() {
    let d = scratch("osm-bad");
    let base = "[[vm]]\nname = 'a'\ncgroup = 'a'\nsl = 1\n[opensm]\nconf = 'x.conf'\npid = 1\n";
    for (text, line, what) in [
        (base.replace("sl = 1", "sl = 16"), 4, "0..15"),
        (
            base.replace("pid = 1", "pid = 1\npid-file = 'p'"),
            5,
            "exactly one",
        ),
        (
            base.replace("pid = 1", "pid = 1\nactuator = 'x'"),
            8,
            "cc, vlarb or both",
        ),
        (
            base.replace("pid = 1", "pid = 1\ncc-sls = 'some'"),
            8,
            "all or bulk",
        ),
        (
            base.replace("pid = 1", "pid = 1\nsweep-timeout = 0.0"),
            8,
            "0.1 to 600",
        ),
        (
            base.replace("pid = 1", "pid = 1\nfrobnicate = 2"),
            8,
            "frobnicate",
        ),
    ] {
        let p = d.join("AGENT.toml");
        let e = Config::parse(&p, &text).unwrap_err();
        assert!(
            e.starts_with(&format!("{}:{line}:", p.display())) && e.contains(what),
            "{e}"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn compose_replaces_only_qos_and_cc_options() {
    let original = "dump_files_dir /x\n# a comment\nqos FALSE\nqos_vlarb_low 0:1\ncc_cct 0:0\ncongestion_control FALSE\nsweep_interval 10 # keep\n";
    let policy = ibcloud_qos::Preset::StMaxQ.policy(ibcloud_qos::CcSls::All);
    let out = compose(original, &policy).unwrap();
    assert!(
        out.starts_with("dump_files_dir /x\n# a comment\nsweep_interval 10 # keep\n"),
        "{out}"
    );
    assert!(!out.contains("qos FALSE") && !out.contains("cc_cct 0:0\n"));
    assert!(out.contains("qos_vlarb_low 0:254,1:1") && out.contains("congestion_control TRUE"));
    for line in out.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let key = line.split_whitespace().next().unwrap();
        assert!(
            managed(key) || key == "dump_files_dir" || key == "sweep_interval",
            "{line}"
        );
    }
}

#[test]
fn sphinx_flows_need_latency_reports_and_an_opensm_table() {
    let d = scratch("sphinx-bad");
    v2_tree(&d.join("cg"), &["a", "b"]);
    let text = |latency: &str, opensm: &str| {
        format!(
            "[agent]\nstate-file = 'st'\ncgroup-root = 'cg'\n[[vm]]\nname = 'a'\ncgroup = 'a'\nsl = 0\nlatency = true\n\
             [[vm]]\nname = 'b'\ncgroup = 'b'\nsl = 1\n{latency}\n[policy]\n\
             flows = [{{ vm = 'a', base-us = 48.0 }}, {{ vm = 'b', base-us = 187.0 }}]\n\
             groups = [{{ a = 'a', b = 'b', target = '1:4' }}]\n{opensm}"
        )
    };
    let err = |t: String| -> String {
        fs::write(d.join("AGENT.toml"), t).unwrap();
        let cfg = Config::load(&d.join("AGENT.toml")).unwrap();
        match run(
            &cfg,
            "sphinx",
            &RunOptions {
                dry_run: true,
                ..Default::default()
            },
            &mut || false,
        ) {
            Err(AgentError::Input(m)) => m,
            other => panic!("expected an input error, got {other:?}"),
        }
    };
    let m = err(text("", ""));
    assert!(m.contains("flows[1]: VM 'b' reports no latencies"), "{m}");
    let m = err(text("latency = true", ""));
    assert!(m.contains("add an [opensm] table"), "{m}");
    // two flows on one SL cannot be told apart
    let m =
        err(text("latency = true", "[opensm]\nconf = 'x'\npid = 1\n").replace("sl = 1", "sl = 0"));
    assert!(
        m.contains("SL 0 is also the SL of flow 0") && m.contains("AGENT.toml:12:"),
        "{m}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_crashed_runs_opensm_conf_comes_back_from_the_state_file() {
    use ibcloud_agent::state::{self, SavedConf, State};
    let d = scratch("state-osm");
    let conf = d.join("opensm.conf");
    fs::write(&conf, "qos TRUE\nqos_vlarb_low 0:1,1:254\n").unwrap();
    let st = State {
        pid: 0x3FFF_FFF0,
        cgroups: Vec::new(),
        opensm: Some(SavedConf {
            path: conf.clone(),
            original: "sweep_interval 0\n".into(),
            pid: 0x3FFF_FFF0, // above pid_max: no OpenSM to reload
        }),
    };
    state::save(&d.join("agent.state"), &st).unwrap();
    let r = state::restore(&d.join("agent.state")).unwrap().unwrap();
    assert!(r.failed.is_empty(), "{r:?}");
    assert!(r.restored[0].contains("not reloaded"), "{r:?}");
    assert_eq!(fs::read_to_string(&conf).unwrap(), "sweep_interval 0\n");
    assert!(!d.join("agent.state").exists());
    // an old state file (no opensm key) still loads
    fs::write(d.join("old.state"), "{\"pid\": 1, \"cgroups\": []}").unwrap();
    assert_eq!(
        state::load(&d.join("old.state")).unwrap().unwrap().opensm,
        None
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn target_control_lines_on_the_latency_socket() {
    use ibcloud_agent::sensors::latency::LatencyInbox;
    let inbox = LatencyInbox::new(&[("a".into(), true)]);
    inbox.serve(
        "a 50\n!target 0 1:4\n!target 1 fair\n!target x 1\n!target 0 0\n!target 0\na 60\n"
            .as_bytes(),
    );
    let t = inbox.take();
    assert_eq!(t.per_vm[0], vec![50.0, 60.0]);
    assert_eq!(t.targets, vec![(0, 0.25), (1, 1.0)]);
    assert_eq!(t.malformed, 3, "{:?}", t.errors);
    assert!(t.errors[0].contains("not an index") && t.errors[2].contains("GROUP RATIO"));
    assert!(inbox.take().targets.is_empty());
}

#[test]
fn settings_a_reload_cannot_apply_are_refused() {
    use ibcloud_agent::opensm::check_reloadable;
    let p = ibcloud_qos::Preset::StMax.policy(ibcloud_qos::CcSls::All);
    // the presets keep OpenSM's defaults (key 0, 500 MADs)
    check_reloadable("sweep_interval 0\n", &p).unwrap();
    check_reloadable(
        "cc_key 0x0000000000000000\ncc_max_outstanding_mads 500 # default\n",
        &p,
    )
    .unwrap();
    let e = check_reloadable("cc_key 0x00000000000000AB\n", &p).unwrap_err();
    assert!(
        e.contains("cc_key") && e.contains("0xab") && e.contains("restart OpenSM"),
        "{e}"
    );
    let e = check_reloadable("cc_max_outstanding_mads 100\n", &p).unwrap_err();
    assert!(e.contains("cc_max_outstanding_mads"), "{e}");
    // QoS-only settings have no CC key to check
    let q = ibcloud_qos::Policy { cc: None, ..p };
    check_reloadable("cc_key 0x1\n", &q).unwrap();
}
