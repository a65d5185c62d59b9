//! The subnet manager's sweep state machine.
//!
//! ```text
//!  start ──► DISCOVERING ──heavy sweep──► MASTER ──light sweep (every interval)──┐
//!                 ▲                          │  ▲                                 │
//!                 └── trap / PortStateChange ┘  └── nothing changed ◄────────────┘
//! ```
//!
//! A **heavy sweep** discovers the subnet by directed route, assigns LIDs
//! (guid2lid cache first, then OpenSM's order), routes with the chosen
//! engine and programs the switches (see [`crate::program`]). If the engine
//! fails, the previous tables stay in place and the failure is reported; the
//! fabric is never left half-programmed silently (every failed SMP is listed
//! in the report). A **light sweep** reads SwitchInfo of every known switch
//! (one SMP each): a PortStateChange flag, a switch that stops answering or a
//! pending trap starts a heavy sweep.

use crate::discover::{discover, to_fabric_ordered, Discovery};
use crate::error::SmError;
use crate::mads::{Mads, Reliability, Request};
use crate::program::{bring_up, Held, ProgramOptions, ProgramReport};
use crate::transport::Transport;
use crate::wire::{attr, NodeType, Route, SmInfoRepr, SmState, SwitchInfoRepr};
use ibcloud_fabric::lft::ForwardingTables;
use ibcloud_fabric::lids::{assign_lids, guid2lid_of, LidOptions, LidPolicy};
use ibcloud_fabric::{Fabric, NodeId, PortRef};
use ibcloud_routing::EngineOptions;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// How the SM runs.
#[derive(Clone, Debug)]
pub struct SmConfig {
    /// Routing engine name (any of `ibcloud_routing::engine_names()`).
    pub engine: String,
    /// LMC of CA ports.
    pub lmc: u8,
    /// guid2lid cache: read when it exists, written after every heavy sweep.
    pub guid2lid: Option<PathBuf>,
    /// Timeouts, retries, window.
    pub reliability: Reliability,
    /// Read LFT blocks never seen before deciding to send them.
    pub read_unknown_lfts: bool,
    /// Folder for dumps after every heavy sweep: `fabric.topo`
    /// (ibnetdiscover format, with LIDs), `opensm-lfts.dump`, `guid2lid`.
    pub dump_dir: Option<PathBuf>,
    /// SM priority reported in SMInfo.
    pub priority: u8,
    /// Answer SubnAdmGet(PathRecord) (the SA).
    pub sa: bool,
    /// Set Paper I's caching flag in the SA's PathRecords.
    pub sa_caching: bool,
    /// How a heavy sweep after a change re-routes.
    pub reconfig: Reconfig,
    /// LID scheme of a vSwitch fabric (for live migration).
    pub vswitch_scheme: ibcloud_vswitch::Scheme,
    /// How a heavy sweep after the first finds the subnet: re-read only
    /// what flags a change, or walk everything again (OpenSM).
    pub rediscovery: crate::rediscover::Rediscovery,
    /// QoS tables to program on every port after each heavy sweep's
    /// bring-up (SL2VL, VL arbitration; `ibcloud-qos`), as OpenSM's
    /// `qos TRUE` does. Unlike LFTs they are sent again on every heavy sweep.
    pub qos: Option<ibcloud_qos::FabricQos>,
}

/// How a heavy sweep re-routes a fabric it has routed before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Reconfig {
    /// The engine from scratch (OpenSM's behaviour).
    #[default]
    Full,
    /// Paper IV's SlimUpdate (`ibcloud-reconfig`): keep the installed
    /// up-port choices where they still work. Falls back to the engine when
    /// nodes appeared or disappeared (node ids must match).
    SlimUpdate,
    /// Paper III's sub-tree reconfiguration around the links that changed,
    /// grown one level at a time until ibcloud's verification passes
    /// (`ibcloud_reconfig::subtree::repair`); falls back to the engine like
    /// SlimUpdate.
    Subtree,
}

/// The second update phase after SlimUpdate or the sub-tree: entries for
/// the switches the method leaves blank (their own LID-routed answers and
/// traps), sent after the first phase when every CA pair is reachable.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Completion {
    /// Every CA pair reachable after the first phase (the condition).
    pub ca_pairs_reachable: bool,
    /// Entries added.
    pub entries_added: u64,
    /// LFT blocks that differ (the model's count of the SMPs).
    pub predicted_lft_blocks: u64,
    /// What was sent (None when nothing was needed or the condition failed).
    pub program: Option<ProgramReport>,
}

impl Reconfig {
    /// Parses `full`, `slimupdate` or `subtree`.
    pub fn parse(s: &str) -> Result<Self, SmError> {
        match s {
            "full" => Ok(Self::Full),
            "slimupdate" => Ok(Self::SlimUpdate),
            "subtree" => Ok(Self::Subtree),
            o => Err(SmError::Refused(format!(
                "unknown reconfiguration '{o}' (full, slimupdate, subtree)"
            ))),
        }
    }
}

impl Default for SmConfig {
    fn default() -> Self {
        Self {
            engine: "minhop".into(),
            lmc: 0,
            guid2lid: None,
            reliability: Reliability::default(),
            read_unknown_lfts: false,
            dump_dir: None,
            priority: 0,
            sa: true,
            sa_caching: false,
            reconfig: Reconfig::Full,
            vswitch_scheme: ibcloud_vswitch::Scheme::Prepopulated,
            rediscovery: crate::rediscover::Rediscovery::Targeted,
            qos: None,
        }
    }
}

impl SmConfig {
    /// Checks the engine name and the LMC (before any port is opened).
    pub fn validate(&self) -> Result<(), SmError> {
        ibcloud_routing::registry::engine(&self.engine, &EngineOptions::default())?;
        if self.lmc > 7 {
            return Err(SmError::Refused(format!("LMC {} is not 0..=7", self.lmc)));
        }
        Ok(())
    }
}

/// What one heavy sweep did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepReport {
    /// Sweep number (1 = bring-up).
    pub sweep: u64,
    /// Why it ran.
    pub reason: String,
    /// Switches found.
    pub switches: usize,
    /// CAs and routers found.
    pub cas: usize,
    /// Links found.
    pub links: usize,
    /// Routes that did not answer (label, reason).
    pub unreachable: Vec<(String, String)>,
    /// How the subnet was found: `full` (the whole walk), `targeted`
    /// (only the switches that flagged a change were re-read), or
    /// `full (…)` with why the targeted walk gave up.
    pub discovery: String,
    /// Targeted: switches re-read, links found down and up.
    pub discovery_changes: Option<(usize, usize, usize)>,
    /// SMPs sent during discovery.
    pub discovery_smps: u64,
    /// Seconds spent discovering.
    pub discovery_seconds: f64,
    /// Seconds the engine took.
    pub routing_seconds: f64,
    /// The engine that routed (None when it failed).
    pub engine: Option<String>,
    /// The engine's error, when it failed (the old tables stay).
    pub routing_error: Option<String>,
    /// Programming.
    pub program: ProgramReport,
    /// SMPs of the whole sweep.
    pub total_smps: u64,
    /// Seconds from the start of the sweep to the last acknowledgement.
    pub seconds: f64,
    /// How the tables were computed: the engine, or `slimupdate`.
    pub method: String,
    /// SlimUpdate's kept and moved up-port choices.
    pub slimupdate_kept_moved: Option<(u64, u64)>,
    /// The sub-trees tried (`--reconfig subtree`): nodes, levels, changes, checks.
    pub subtree: Option<ibcloud_reconfig::subtree::Repair>,
    /// SlimUpdate and the sub-tree: the second phase, sent once the first is
    /// acknowledged (`ibcloud_reconfig::completion`).
    pub completion: Option<Completion>,
    /// LFT blocks whose entries differ between the previous tables and the
    /// new ones (the model's count of the SMPs a differential update needs;
    /// None on the first sweep or when node ids changed).
    pub predicted_lft_blocks: Option<u64>,
    /// Another SM answered SMInfo as MASTER: this SM stays STANDBY and
    /// programs nothing (its GUID and where it sits).
    pub standby_because: Option<String>,
    /// What the operator must know about this sweep's result (e.g. an
    /// engine whose deadlock freedom needs SL2VL tables the SM does not
    /// program).
    pub warnings: Vec<String>,
    /// The SM's LID.
    pub sm_lid: u16,
    /// Highest LID assigned.
    pub max_lid: u16,
    /// QoS programming (with `SmConfig::qos`).
    pub qos: Option<crate::program::QosReport>,
}

/// The current view of the subnet.
#[derive(Debug)]
pub struct Subnet {
    /// What discovery saw (updated with every Set's answer).
    pub discovery: Discovery,
    /// The model, with LIDs.
    pub fabric: Fabric,
    /// Fabric node of every discovered node.
    pub ids: Vec<NodeId>,
    /// The tables the switches were programmed with.
    pub tables: ForwardingTables,
}

/// The subnet manager.
pub struct SubnetManager<T: Transport> {
    /// SMP engine.
    pub mads: Mads<T>,
    /// Configuration.
    pub config: SmConfig,
    /// What the switches hold.
    pub held: Held,
    /// The subnet after the last heavy sweep.
    pub subnet: Option<Subnet>,
    /// Heavy sweeps done.
    pub heavy_sweeps: u64,
    /// Light sweeps done.
    pub light_sweeps: u64,
    /// The last heavy sweep's report.
    pub last_report: Option<SweepReport>,
    /// SM state.
    pub state: SmState,
    /// The vSwitch view (VM placement) since the last heavy sweep.
    pub virtual_fabric: Option<ibcloud_vswitch::VirtualFabric>,
    /// The last migration's report (refused ones included), for `status`.
    pub last_migration: Option<crate::migrate::MigrationReport>,
    /// Issuer LIDs of the traps a light sweep consumed, for the next heavy
    /// sweep's targeted walk.
    trap_lids: Vec<u16>,
    started: Instant,
}

impl<T: Transport> std::fmt::Debug for SubnetManager<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubnetManager")
            .field("config", &self.config)
            .field("heavy_sweeps", &self.heavy_sweeps)
            .finish()
    }
}

impl<T: Transport> SubnetManager<T> {
    /// An SM over `transport`; nothing is sent yet.
    pub fn new(transport: T, config: SmConfig) -> Result<Self, SmError> {
        config.validate()?;
        let mads = Mads::new(transport, config.reliability);
        Ok(Self {
            mads,
            config,
            held: Held::default(),
            subnet: None,
            heavy_sweeps: 0,
            light_sweeps: 0,
            last_report: None,
            state: SmState::Discovering,
            virtual_fabric: None,
            last_migration: None,
            trap_lids: Vec::new(),
            started: Instant::now(),
        })
    }

    /// Seconds since the SM started.
    pub fn uptime(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// LIDs as OpenSM chooses them (`osm_lid_mgr.c`): the previous sweep's;
    /// else per port the guid2lid cache's entry, else the LID the port
    /// already carries when it is LMC-aligned and free (`configured`, in
    /// OpenSM's port order), else the next free range.
    fn lid_options(
        &self,
        sm_port: PortRef,
        configured: Vec<(ibcloud_fabric::Guid, u16, bool)>,
    ) -> Result<LidOptions, SmError> {
        let cached = match &self.config.guid2lid {
            Some(p) if p.exists() => {
                let text = std::fs::read_to_string(p).map_err(|e| SmError::Io {
                    path: p.display().to_string(),
                    source: e,
                })?;
                Some(ibcloud_fabric::formats::guid2lid::parse(
                    &text,
                    &p.display().to_string(),
                )?)
            }
            _ => None,
        };
        // Keep the LIDs of the previous sweep when there is one.
        let previous = self.subnet.as_ref().map(|s| guid2lid_of(&s.fabric));
        let map = match (previous, cached) {
            (Some(p), _) => Some(p),
            (None, c) => keep_configured(c, configured, self.config.lmc),
        };
        Ok(LidOptions {
            policy: match map {
                Some(map) => LidPolicy::Guid2Lid {
                    map,
                    sm_port: Some(sm_port),
                },
                None => LidPolicy::OpenSm {
                    sm_port: Some(sm_port),
                },
            },
            lmc: self.config.lmc,
            lmc_esp0: false,
        })
    }

    /// One heavy sweep: discover, assign LIDs, route, program.
    pub fn heavy_sweep(&mut self, reason: &str) -> Result<SweepReport, SmError> {
        let t0 = Instant::now();
        let sent0 = self.mads.counters.total_sent;
        let mut report = SweepReport {
            sweep: self.heavy_sweeps + 1,
            reason: reason.to_string(),
            ..Default::default()
        };
        let mut d = self.find_subnet(&mut report)?;
        report.discovery_smps = self.mads.counters.total_sent - sent0;
        report.discovery_seconds = t0.elapsed().as_secs_f64();
        report.unreachable = d.unreachable.clone();
        if let Some(other) = self.other_master(&d) {
            self.state = SmState::Standby;
            let (guid, _) = self.mads.transport().local_port();
            self.mads.sm_info = Some(SmInfoRepr {
                guid,
                sm_key: 0,
                act_count: 0,
                priority: self.config.priority,
                state: SmState::Standby,
            });
            report.standby_because = Some(other);
            report.total_smps = self.mads.counters.total_sent - sent0;
            report.seconds = t0.elapsed().as_secs_f64();
            self.heavy_sweeps += 1;
            self.last_report = Some(report.clone());
            return Ok(report);
        }
        let previous = self.subnet.as_ref().map(|s| &s.fabric);
        let (mut fabric, ids) = to_fabric_ordered(&d, previous)?;
        let aligned = previous.is_some_and(|p| {
            p.num_nodes() == fabric.num_nodes()
                && fabric.iter_nodes().all(|(id, n)| p.node(id).guid == n.guid)
        });
        report.switches = d.switches();
        report.cas = d.nodes.len() - report.switches;
        report.links = d.links.len();
        let sm_port = PortRef::new(ids[d.sm_port.0], d.sm_port.1);
        let configured = configured_lids(&d, &ids, &fabric, sm_port);
        let lid_opts = self.lid_options(sm_port, configured)?;
        assign_lids(&mut fabric, &lid_opts)?;
        let sm_lid = fabric.port(sm_port).map(|p| p.lid.0).unwrap_or(0);
        report.sm_lid = sm_lid;
        report.max_lid = fabric.max_lid();
        let t_route = Instant::now();
        let slim = self.config.reconfig == Reconfig::SlimUpdate && aligned;
        let subtree = self.config.reconfig == Reconfig::Subtree && aligned;
        report.method = if slim {
            "slimupdate".into()
        } else if subtree {
            "subtree".into()
        } else {
            self.config.engine.clone()
        };
        let routed = if slim {
            let prev = self
                .subnet
                .as_ref()
                .expect("aligned implies a previous subnet");
            ibcloud_reconfig::slimupdate::slim_update(
                &prev.fabric,
                &prev.tables,
                &fabric,
                &ibcloud_reconfig::slimupdate::SlimUpdateOptions::default(),
            )
            .map(|r| {
                report.slimupdate_kept_moved = Some((r.kept, r.moved));
                ibcloud_routing::Routing {
                    tables: r.tables,
                    path_sls: None,
                }
            })
            .map_err(|e| e.to_string())
        } else if subtree {
            let prev = self
                .subnet
                .as_ref()
                .expect("aligned implies a previous subnet");
            subtree_reroute(&prev.fabric, &prev.tables, &fabric).and_then(|(tables, rep)| {
                let verified = rep.verified;
                report.subtree = Some(rep);
                if verified {
                    Ok(ibcloud_routing::Routing {
                        tables,
                        path_sls: None,
                    })
                } else {
                    Err("subtree: even the whole tree fails ibcloud's verification".into())
                }
            })
        } else {
            ibcloud_routing::registry::engine(&self.config.engine, &EngineOptions::default())
                .and_then(|e| e.route(&fabric))
                .map_err(|e| e.to_string())
        };
        report.routing_seconds = t_route.elapsed().as_secs_f64();
        let (mut tables, sls) = match routed {
            Ok(r) => {
                report.engine = Some(self.config.engine.clone());
                if let Some(sls) = r.path_sls.as_ref().filter(|s| s.num_sls() > 1) {
                    report.warnings.push(format!(
                        "{} spreads paths over {} SLs for deadlock freedom, but this SM does not program \
                         SL2VL tables or operational VLs: the switches keep their own, so the fabric is \
                         deadlock-free only if those map the SLs to separate VLs (OpenSM programs them)",
                        self.config.engine,
                        sls.num_sls()
                    ));
                }
                (r.tables, r.path_sls)
            }
            Err(e) => {
                report.routing_error = Some(e);
                report.seconds = t0.elapsed().as_secs_f64();
                report.total_smps = self.mads.counters.total_sent - sent0;
                self.heavy_sweeps += 1;
                self.last_report = Some(report.clone());
                return Ok(report);
            }
        };
        if aligned {
            let prev = self
                .subnet
                .as_ref()
                .expect("aligned implies a previous subnet");
            report.predicted_lft_blocks = Some(
                fabric
                    .switches()
                    .map(|sw| prev.tables.changed_blocks(&tables, sw).len() as u64)
                    .sum(),
            );
        }
        let options = ProgramOptions {
            read_unknown: self.config.read_unknown_lfts,
        };
        report.program = bring_up(
            &mut self.mads,
            &mut d,
            &ids,
            &fabric,
            &tables,
            &mut self.held,
            sm_lid,
            options,
        );
        if (slim || subtree) && report.program.failures.is_empty() {
            report.completion =
                Some(self.complete(&mut d, &ids, &fabric, &mut tables, sm_lid, options));
        }
        if let Some(q) = &self.config.qos {
            report.qos = Some(crate::program::program_qos(&mut self.mads, &d, q));
        }
        self.state = SmState::Master;
        let guid = d.nodes[d.sm_port.0]
            .port_guids
            .get(&d.sm_port.1)
            .copied()
            .unwrap_or(d.nodes[d.sm_port.0].info.port_guid);
        self.mads.sm_info = Some(SmInfoRepr {
            guid,
            sm_key: 0,
            act_count: self.heavy_sweeps as u32 + 1,
            priority: self.config.priority,
            state: SmState::Master,
        });
        if self.config.sa {
            let service = crate::sa::SaService::new(
                fabric.clone(),
                tables.clone(),
                sls,
                self.config.sa_caching,
            )
            .with_subnet(&d, &ids, self.mads.sm_info.clone());
            crate::sa::SaServer::install(&mut self.mads.sa, service);
        }
        self.heavy_sweeps += 1;
        report.total_smps = self.mads.counters.total_sent - sent0;
        report.seconds = t0.elapsed().as_secs_f64();
        // A heavy sweep re-derives the vSwitch view from what it found.
        self.virtual_fabric = None;
        self.subnet = Some(Subnet {
            discovery: d,
            fabric,
            ids,
            tables,
        });
        self.write_files()?;
        self.last_report = Some(report.clone());
        Ok(report)
    }

    /// The subnet as it is now: the targeted walk over the previous sweep's
    /// view when there is one (and the SM is master), else — or when the
    /// walk gives up — the full discovery.
    fn find_subnet(&mut self, report: &mut SweepReport) -> Result<Discovery, SmError> {
        use crate::rediscover::{rediscover, Outcome, Rediscovery};
        let lids: Vec<u16> = self
            .trap_lids
            .drain(..)
            .chain(self.mads.pending_traps.drain(..).map(|(_, lid)| lid))
            .collect();
        let mut why = String::new();
        if self.config.rediscovery == Rediscovery::Targeted && self.state == SmState::Master {
            if let Some(s) = &self.subnet {
                let trap_nodes = s
                    .ids
                    .iter()
                    .enumerate()
                    .filter(|&(_, &id)| {
                        s.fabric
                            .ports(id)
                            .iter()
                            .any(|p| p.lid.is_set() && lids.contains(&p.lid.0))
                    })
                    .map(|(i, _)| i)
                    .collect();
                match rediscover(&mut self.mads, &s.discovery, &trap_nodes)? {
                    Outcome::Updated {
                        discovery,
                        changed_switches,
                        links_down,
                        links_up,
                    } => {
                        report.discovery = "targeted".into();
                        report.discovery_changes = Some((changed_switches, links_down, links_up));
                        return Ok(discovery);
                    }
                    Outcome::GiveUp(reason) => why = format!(" (targeted walk gave up: {reason})"),
                }
            }
        }
        report.discovery = format!("full{why}");
        discover(&mut self.mads)
    }

    /// Asks every other port that says IsSM (CapabilityMask bit 1) for its
    /// SMInfo; the first that is MASTER is returned (GUID, priority, route).
    /// Without an SM-to-SM handover protocol, this SM then stays STANDBY
    /// whatever the priorities say.
    fn other_master(&mut self, d: &Discovery) -> Option<String> {
        let mut reqs = Vec::new();
        for (i, n) in d.nodes.iter().enumerate() {
            for (&p, pi) in &n.ports {
                if (i, p) == d.sm_port
                    || pi.capability_mask & 0x2 == 0
                    || n.info.node_type == NodeType::Switch
                {
                    continue;
                }
                if let Some(r) = n.route_to(p) {
                    reqs.push(Request::get(attr::SM_INFO, 0, Route::Directed(r.clone())));
                }
            }
        }
        for (req, ans) in reqs.iter().zip(self.mads.run(&reqs)) {
            if let Ok(info) = ans.and_then(|s| Ok(SmInfoRepr::parse(&s.data)?)) {
                if info.state == SmState::Master {
                    return Some(format!(
                        "SM 0x{:016x} (priority {}) at {} is MASTER",
                        info.guid,
                        info.priority,
                        req.route.label()
                    ));
                }
            }
        }
        None
    }

    fn write_files(&self) -> Result<(), SmError> {
        let Some(s) = &self.subnet else { return Ok(()) };
        let io = |p: &std::path::Path, e: std::io::Error| SmError::Io {
            path: p.display().to_string(),
            source: e,
        };
        let g2l = guid2lid_of(&s.fabric);
        let mut text = Vec::new();
        ibcloud_fabric::formats::guid2lid::write(&g2l, &mut text)
            .map_err(|e| io(std::path::Path::new("guid2lid"), e))?;
        if let Some(p) = &self.config.guid2lid {
            std::fs::write(p, &text).map_err(|e| io(p, e))?;
        }
        if let Some(dir) = &self.config.dump_dir {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            let p = dir.join("guid2lid");
            std::fs::write(&p, &text).map_err(|e| io(&p, e))?;
            let p = dir.join("fabric.topo");
            ibcloud_fabric::formats::write_fabric(
                &s.fabric,
                &p,
                Some(ibcloud_fabric::formats::Format::Ibnetdiscover),
            )?;
            // Directed routes to every switch, for tools that read switches
            // by DR (`ibroute -D PATH`), independent of the LFTs.
            let p = dir.join("dr-paths");
            let mut text = String::new();
            for n in &s.discovery.nodes {
                if n.info.node_type == NodeType::Switch {
                    let route = Route::Directed(n.routes.get(&0).cloned().unwrap_or_default());
                    text.push_str(&format!("0x{:016x} {}\n", n.info.node_guid, route.label()));
                }
            }
            std::fs::write(&p, text).map_err(|e| io(&p, e))?;
            let p = dir.join("opensm-lfts.dump");
            let mut out = Vec::new();
            ibcloud_fabric::formats::lfts_dump::write(&s.fabric, &s.tables, &mut out)
                .map_err(|e| io(&p, e))?;
            std::fs::write(&p, out).map_err(|e| io(&p, e))?;
        }
        Ok(())
    }

    /// Migrates a VM live (see [`crate::migrate`]): `vm` and `dst` as
    /// `ibcloud vswitch` names them (VM name or `#i`, hypervisor name or `#i`).
    pub fn migrate(
        &mut self,
        vm: &str,
        dst: &str,
        method: ibcloud_vswitch::Method,
        partially_static: bool,
        policy: crate::migrate::TransitionPolicy,
    ) -> Result<crate::migrate::MigrationReport, SmError> {
        let scheme = self.config.vswitch_scheme;
        let s = self
            .subnet
            .as_mut()
            .ok_or_else(|| SmError::Refused("no subnet yet".into()))?;
        let r = crate::migrate::migrate(
            &mut self.mads,
            &mut s.discovery,
            &s.ids,
            &mut s.fabric,
            &mut s.tables,
            &mut self.held,
            &mut self.virtual_fabric,
            scheme,
            vm,
            dst,
            method,
            partially_static,
            policy,
        )
        .map_err(SmError::Refused)?;
        self.last_migration = Some(r.clone());
        if r.refused.is_some() {
            return Ok(r);
        }
        if self.config.sa {
            let service = crate::sa::SaService::new(
                s.fabric.clone(),
                s.tables.clone(),
                None,
                self.config.sa_caching,
            )
            .with_subnet(&s.discovery, &s.ids, self.mads.sm_info.clone());
            crate::sa::SaServer::install(&mut self.mads.sa, service);
        }
        self.write_files()?;
        Ok(r)
    }

    /// The second update phase (see [`Completion`]); `tables` become the
    /// completed ones when they are sent.
    fn complete(
        &mut self,
        d: &mut Discovery,
        ids: &[NodeId],
        fabric: &Fabric,
        tables: &mut ForwardingTables,
        sm_lid: u16,
        options: ProgramOptions,
    ) -> Completion {
        use ibcloud_routing::verify::{verify, VerifyOptions};
        let mut c = Completion::default();
        let opts = VerifyOptions {
            credit_loops: false,
            max_failures: 0,
            ..VerifyOptions::default()
        };
        c.ca_pairs_reachable = verify(fabric, tables, None, &opts)
            .map(|r| r.pairs == r.reachable)
            .unwrap_or(false);
        if !c.ca_pairs_reachable {
            return c;
        }
        let Ok((done, added)) =
            ibcloud_reconfig::completion::complete_blank_entries(fabric, tables)
        else {
            return c;
        };
        c.entries_added = added;
        if added == 0 {
            return c;
        }
        c.predicted_lft_blocks = fabric
            .switches()
            .map(|sw| tables.changed_blocks(&done, sw).len() as u64)
            .sum();
        c.program = Some(bring_up(
            &mut self.mads,
            d,
            ids,
            fabric,
            &done,
            &mut self.held,
            sm_lid,
            options,
        ));
        *tables = done;
        c
    }

    /// One light sweep: SwitchInfo of every known switch. Returns the reason
    /// for a heavy sweep, if any.
    pub fn light_sweep(&mut self) -> Option<String> {
        self.light_sweeps += 1;
        if !self.mads.pending_traps.is_empty() {
            let traps: Vec<String> = self
                .mads
                .pending_traps
                .drain(..)
                .map(|(n, l)| {
                    self.trap_lids.push(l);
                    format!("trap {n} from LID {l}")
                })
                .collect();
            return Some(traps.join(", "));
        }
        let Some(s) = &self.subnet else {
            return Some("no subnet yet".into());
        };
        let d = &s.discovery;
        let mut reqs = Vec::new();
        let mut names = Vec::new();
        for n in &d.nodes {
            if n.info.node_type == NodeType::Switch {
                reqs.push(Request::get(
                    attr::SWITCH_INFO,
                    0,
                    Route::Directed(n.routes.get(&0).cloned().unwrap_or_default()),
                ));
                names.push(n.description.clone());
            }
        }
        for (name, ans) in names.into_iter().zip(self.mads.run(&reqs)) {
            match ans.and_then(|s| Ok(SwitchInfoRepr::parse(&s.data)?)) {
                Ok(si) if si.port_state_change => {
                    return Some(format!("port state change at {name}"))
                }
                Ok(_) => {}
                Err(e) => return Some(format!("{name}: {e}")),
            }
        }
        None
    }
}

/// The LIDs ports already carry (PortInfo base LID; CA ports and switch
/// port 0), as (port GUID, LID, is a CA port), the SM's port first, then in
/// OpenSM's port-table order (the byte-swapped GUID on x86).
fn configured_lids(
    d: &Discovery,
    ids: &[NodeId],
    fabric: &Fabric,
    sm_port: PortRef,
) -> Vec<(ibcloud_fabric::Guid, u16, bool)> {
    let mut out = Vec::new();
    for (i, n) in d.nodes.iter().enumerate() {
        let switch = n.info.node_type == NodeType::Switch;
        for (&p, pi) in &n.ports {
            if (switch && p != 0) || (!switch && p == 0) || pi.lid == 0 {
                continue;
            }
            let pr = PortRef::new(ids[i], p);
            if let Some(port) = fabric.port(pr) {
                out.push((pr, port.guid, pi.lid, !switch));
            }
        }
    }
    out.sort_by_key(|&(pr, g, _, _)| (pr != sm_port, g.0.swap_bytes()));
    out.into_iter().map(|(_, g, l, ca)| (g, l, ca)).collect()
}

/// The guid2lid map OpenSM's LID manager acts on: the cache's entries, plus
/// every configured LID of a port the cache does not list that is in the
/// unicast range, aligned to the LMC (CA ports) and free. None when empty
/// (the fresh-subnet order applies).
fn keep_configured(
    cached: Option<ibcloud_fabric::lids::Guid2Lid>,
    configured: Vec<(ibcloud_fabric::Guid, u16, bool)>,
    lmc: u8,
) -> Option<ibcloud_fabric::lids::Guid2Lid> {
    use ibcloud_fabric::Lid;
    let mut map = cached.unwrap_or_default();
    let mut used: std::collections::BTreeSet<u16> =
        map.values().flat_map(|&(a, b)| a.0..=b.0).collect();
    for (guid, lid, ca) in configured {
        let n: u16 = if ca { 1 << lmc.min(7) } else { 1 };
        let last = lid as u32 + n as u32 - 1;
        if map.contains_key(&guid) || lid % n != 0 || last > 0xBFFF {
            continue;
        }
        if (lid..=last as u16).any(|l| used.contains(&l)) {
            continue;
        }
        used.extend(lid..=last as u16);
        map.insert(guid, (Lid(lid), Lid(last as u16)));
    }
    (!map.is_empty()).then_some(map)
}

/// `--reconfig subtree`: the links that changed between two sweeps, the
/// leaves below them, and Paper III's sub-tree grown until verified, with
/// the roots of the fabric before (a degraded tree is ranked as before).
fn subtree_reroute(
    before: &Fabric,
    old: &ibcloud_fabric::lft::ForwardingTables,
    now: &Fabric,
) -> Result<
    (
        ibcloud_fabric::lft::ForwardingTables,
        ibcloud_reconfig::subtree::Repair,
    ),
    String,
> {
    use ibcloud_reconfig::subtree::{changed_links, nodes_for_links, repair};
    let opts = EngineOptions {
        roots: Some(ibcloud_reconfig::slimupdate::roots_of(before).map_err(|e| e.to_string())?),
        ..EngineOptions::default()
    };
    let links = changed_links(before, now);
    let nodes = nodes_for_links(before, &links, &opts).map_err(|e| e.to_string())?;
    repair(before, old, now, &nodes, &opts).map_err(|e| e.to_string())
}
