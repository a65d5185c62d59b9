//! opensm.conf output for OpenSM 3.3.23.
//!
//! Option names, value syntax and limits follow OpenSM's own option table
//! and parsers (opensm/osm_subnet.c, osm_qos.c, osm_congestion_control.c of
//! 3.3.23): booleans are the literal `TRUE`; VL arbitration tables are
//! `VL:weight` pairs separated by commas (at most 64 are read); SL2VL is 16
//! comma-separated VLs; per-SL CA congestion options take `SL VALUE`; the
//! CCT is `shift:multiplier,…` (at most 128 entries; CCTI_Limit = entries −
//! 1); port masks are 256-bit hex numbers, bit n = port n. OpenSM reads its
//! configuration with a 1023-byte line buffer, so a longer line would be
//! cut: the writer refuses to produce one.

use crate::model::{FabricCc, FabricQos, Policy, PortClass, QosOverride, QosTables};
use ibcloud_netsim::VlArbEntry;
use std::fmt::Write as _;

/// Longest option line OpenSM 3.3.23 reads whole (`fgets(line, 1023, …)`
/// keeps 1022 bytes including the newline).
pub const MAX_LINE: usize = 1021;

fn vlarb(t: &[VlArbEntry]) -> String {
    if t.is_empty() {
        // OpenSM fills entries the string does not give with VL0 weight 0
        // (unused), but an absent option would fall back to its defaults.
        return "0:0".into();
    }
    t.iter()
        .map(|e| format!("{}:{}", e.vl, e.weight))
        .collect::<Vec<_>>()
        .join(",")
}

fn sl2vl(m: &[u8; 16]) -> String {
    m.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn tables(out: &mut String, prefix: &str, t: &QosTables) {
    let _ = writeln!(out, "{prefix}_max_vls {}", t.max_vls);
    let _ = writeln!(out, "{prefix}_high_limit {}", t.high_limit);
    let _ = writeln!(out, "{prefix}_vlarb_high {}", vlarb(&t.vlarb_high));
    let _ = writeln!(out, "{prefix}_vlarb_low {}", vlarb(&t.vlarb_low));
    let _ = writeln!(out, "{prefix}_sl2vl {}", sl2vl(&t.sl2vl));
}

fn override_lines(out: &mut String, prefix: &str, o: &QosOverride) {
    if let Some(v) = o.max_vls {
        let _ = writeln!(out, "{prefix}_max_vls {v}");
    }
    if let Some(v) = o.high_limit {
        let _ = writeln!(out, "{prefix}_high_limit {v}");
    }
    if let Some(v) = &o.vlarb_high {
        let _ = writeln!(out, "{prefix}_vlarb_high {}", vlarb(v));
    }
    if let Some(v) = &o.vlarb_low {
        let _ = writeln!(out, "{prefix}_vlarb_low {}", vlarb(v));
    }
    if let Some(v) = &o.sl2vl {
        let _ = writeln!(out, "{prefix}_sl2vl {}", sl2vl(v));
    }
}

fn check_lines(text: String) -> Result<String, String> {
    for (i, l) in text.lines().enumerate() {
        if l.len() > MAX_LINE {
            let key = l.split_whitespace().next().unwrap_or("");
            return Err(format!(
                "line {} ({key}) is {} bytes: OpenSM 3.3.23 reads at most {MAX_LINE} per line and would cut it",
                i + 1,
                l.len()
            ));
        }
    }
    Ok(text)
}

/// The QoS options: `qos TRUE`, `max_op_vls` (operational VLs: OpenSM
/// 3.3.23 parses `qos_max_vls` but does not use it to program ports), the
/// `qos_*` defaults and every per-class override.
pub fn qos_options(q: &FabricQos) -> Result<String, String> {
    q.validate().map_err(|(c, f, m)| {
        let who = c.map_or("qos".to_string(), |c| format!("qos.{}", c.names().1));
        format!("{who}.{f}: {m}")
    })?;
    let mut out = String::new();
    out.push_str("# QoS (ibcloud-qos)\nqos TRUE\n");
    let mut most = q.default.clone();
    most.max_vls = q.max_vls();
    let _ = writeln!(out, "max_op_vls {}", most.op_vls_code());
    tables(&mut out, "qos", &q.default);
    for c in PortClass::ALL {
        let o = q.class(c);
        if !o.is_empty() {
            override_lines(&mut out, c.names().0, o);
        }
    }
    check_lines(out)
}

fn mask_hex(b: [u8; 32]) -> String {
    let mut s = String::from("0x");
    for x in b {
        let _ = write!(s, "{x:02X}");
    }
    s
}

/// The congestion-control options: `congestion_control TRUE`, the key, the
/// switch and CA settings, one group of four per-SL lines for every SL of
/// the CA Control_Map (and any other SL with a non-zero entry), and the CCT.
pub fn cc_options(c: &FabricCc) -> Result<String, String> {
    c.validate().map_err(|(f, m)| format!("cc.{f}: {m}"))?;
    let s = &c.switch;
    let mut out = String::new();
    out.push_str("# Congestion control (ibcloud-qos)\ncongestion_control TRUE\n");
    let _ = writeln!(out, "cc_key 0x{:016x}", c.cc_key);
    let _ = writeln!(out, "cc_max_outstanding_mads {}", c.max_outstanding_mads);
    let _ = writeln!(out, "cc_sw_cong_setting_control_map 0x{:X}", s.control_map);
    let _ = writeln!(
        out,
        "cc_sw_cong_setting_victim_mask {}",
        mask_hex(s.victim_mask.bytes())
    );
    let _ = writeln!(
        out,
        "cc_sw_cong_setting_credit_mask {}",
        mask_hex(s.credit_mask.bytes())
    );
    let _ = writeln!(out, "cc_sw_cong_setting_threshold 0x{:02X}", s.threshold);
    let _ = writeln!(out, "cc_sw_cong_setting_packet_size {}", s.packet_size);
    let _ = writeln!(
        out,
        "cc_sw_cong_setting_credit_starvation_threshold 0x{:02X}",
        s.cs_threshold
    );
    let _ = writeln!(
        out,
        "cc_sw_cong_setting_credit_starvation_return_delay {}:{}",
        s.cs_return_delay.shift, s.cs_return_delay.multiplier
    );
    let _ = writeln!(out, "cc_sw_cong_setting_marking_rate {}", s.marking_rate);
    let _ = writeln!(
        out,
        "cc_ca_cong_setting_port_control 0x{:04X}",
        u16::from(c.ca.sl_based)
    );
    let _ = writeln!(
        out,
        "cc_ca_cong_setting_control_map 0x{:04X}",
        c.ca.control_map
    );
    for (sl, e) in c.ca.entries.iter().enumerate() {
        if c.ca.control_map & (1 << sl) == 0 && *e == Default::default() {
            continue;
        }
        let _ = writeln!(out, "cc_ca_cong_setting_ccti_timer {sl} {}", e.ccti_timer);
        let _ = writeln!(
            out,
            "cc_ca_cong_setting_ccti_increase {sl} {}",
            e.ccti_increase
        );
        let _ = writeln!(
            out,
            "cc_ca_cong_setting_trigger_threshold {sl} {}",
            e.trigger_threshold
        );
        let _ = writeln!(out, "cc_ca_cong_setting_ccti_min {sl} {}", e.ccti_min);
    }
    let cct = c
        .cct
        .iter()
        .map(|e| format!("{}:{}", e.shift, e.multiplier))
        .collect::<Vec<_>>()
        .join(",");
    let _ = writeln!(out, "cc_cct {cct}");
    check_lines(out)
}

/// Both parts of a policy (whichever it has).
pub fn opensm_conf(p: &Policy) -> Result<String, String> {
    let mut out = format!(
        "# opensm.conf fragment for policy '{}' (OpenSM 3.3.23)\n",
        p.name
    );
    if let Some(q) = &p.qos {
        out.push_str(&qos_options(q)?);
    }
    if let Some(c) = &p.cc {
        out.push_str(&cc_options(c)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::{CcSls, Preset};
    use ibcloud_netsim::CctEntry;

    fn value<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
        text.lines()
            .filter_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(' ')))
            .collect()
    }

    #[test]
    fn stmaxq_qos_lines() {
        let t = qos_options(&Preset::StMaxQ.qos()).unwrap();
        assert_eq!(value(&t, "qos"), ["TRUE"]);
        assert_eq!(value(&t, "max_op_vls"), ["2"]);
        assert_eq!(value(&t, "qos_vlarb_low"), ["0:254,1:1"]);
        assert_eq!(value(&t, "qos_vlarb_high"), ["0:0"]);
        assert_eq!(value(&t, "qos_sl2vl"), ["0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"]);
        assert!(value(&t, "qos_ca_high_limit").is_empty());
    }

    #[test]
    fn class_overrides_are_written_with_their_prefix() {
        let mut q = Preset::StMax.qos();
        q.class_mut(PortClass::Swe).high_limit = Some(7);
        let t = qos_options(&q).unwrap();
        assert_eq!(value(&t, "qos_swe_high_limit"), ["7"]);
        assert!(value(&t, "qos_swe_sl2vl").is_empty());
    }

    #[test]
    fn cc_lines_follow_opensm_syntax() {
        let t = cc_options(&Preset::StMax.cc(CcSls::Bulk)).unwrap();
        assert_eq!(value(&t, "congestion_control"), ["TRUE"]);
        assert_eq!(value(&t, "cc_ca_cong_setting_control_map"), ["0xFFFE"]);
        let timers = value(&t, "cc_ca_cong_setting_ccti_timer");
        assert_eq!(timers.len(), 15);
        assert_eq!(timers[0], "1 32767");
        assert_eq!(value(&t, "cc_sw_cong_setting_threshold"), ["0x0F"]);
        let mask = value(&t, "cc_sw_cong_setting_victim_mask")[0];
        assert_eq!(mask.len(), 2 + 64);
        assert!(mask.starts_with("0x7FFF"));
        let cct = value(&t, "cc_cct")[0];
        assert_eq!(cct.split(',').count(), 128);
        assert!(cct.ends_with("0:16383"));
        assert!(t.lines().all(|l| l.len() <= MAX_LINE));
    }

    #[test]
    fn too_long_lines_are_refused() {
        let mut c = Preset::StMax.cc(CcSls::All);
        // 128 entries of "3:16383" are 7 bytes each: 1030 bytes with commas.
        c.cct = vec![
            CctEntry {
                shift: 3,
                multiplier: 16383
            };
            128
        ];
        let e = cc_options(&c).unwrap_err();
        assert!(e.contains("cc_cct") && e.contains("1021"), "{e}");
    }
}
