"""costs.yaml of the demo team (a fictional Kazakh bank's ML platform team, prices in KZT).

Five options: an owned 8xH100 server in an Almaty data centre, a rented dedicated 8-GPU pool,
a managed fine-tuning endpoint of a global cloud, a local Kazakhstan provider's managed
service (SPEC H4), and a hybrid: a small local 2-GPU pool for evaluations and smoke runs with
the trainings sent to the local provider. Vendors, quotes and clauses are fictional; the
amounts are of a plausible size for 2026 (about 500 KZT to the US dollar, stated nowhere in
the file because gpudecide never converts).
"""

from __future__ import annotations

DEMO_COSTS_YAML = """\
# Dala Bank (fictional) - ML platform team: what each way of fine-tuning costs us.
# Every price names the clause or quote it comes from (SPEC C5). All amounts in KZT.
version: 1
currency: KZT
hours_per_month: 730
exit_after_months: 12

data:
  stored_gb: 2500
  loaded_gb_per_job: 45
  artifacts_gb_per_job: 35
  egress_gb_per_training: 30
  source: >-
    storage inventory 2026-05-20 (datasets 1.1 TB, base weights 0.3 TB, checkpoints 1.1 TB)

owned:
  - id: owned-8xh100
    name: "Owned 8xH100 server, Almaty DC"
    provider: "Dala Bank (own hardware)"
    site: "Almaty, Kazakhstan"
    servers: 1
    gpus_per_server: 8
    write_off_months: 36
    capex:
      - item: "HGX H100 8-GPU server"
        kind: server
        quantity: 1
        unit_price: {amount: 142000000, source: "quote Q-2026-031 §2"}
      - item: "100GbE switch and optics"
        kind: network
        quantity: 1
        unit_price: {amount: 7800000, source: "quote Q-2026-031 §4"}
      - item: "NVMe storage node, 60 TB"
        kind: disks
        quantity: 1
        unit_price: {amount: 9500000, source: "quote Q-2026-031 §5"}
      - item: "spare parts kit (PSUs, fans, NVMe)"
        kind: spares
        quantity: 1
        unit_price: {amount: 2400000, source: "quote Q-2026-031 §6"}
      - item: "second power feed and UPS share"
        kind: redundancy
        quantity: 1
        unit_price: {amount: 3200000, source: "offer DC-ALA-114 §3.2"}
    power:
      kw_per_server_busy: 10.2
      kw_per_server_idle: 2.8
      pue: 1.45
      price_per_kwh: {amount: 38, source: "offer DC-ALA-114 §5 (tariff 2026)"}
    colocation:
      price_per_month: {amount: 780000, source: "offer DC-ALA-114 §2 (42U rack, 15 kW)"}
      commitment_months: 24
    support_per_month: {amount: 310000, source: "quote Q-2026-031 §8 (3-year NBD support)"}
    replacements:
      per_year: 1.5
      unit_cost: {amount: 2600000, source: "service history 2024-2025, ticket export"}
    exit:
      resale_share: 0.45
      weeks_to_shrink: 10
    labour:
      - role: platform engineer
        hours_per_month: 64
        rate_per_hour: {amount: 9500, source: "HR rate card 2026 §P2"}
      - role: ML engineer
        hours_per_month: 12
        rate_per_hour: {amount: 11000, source: "HR rate card 2026 §M3"}
      - role: security engineer
        hours_per_month: 6
        rate_per_hour: {amount: 10500, source: "HR rate card 2026 §S1"}
    waiting:
      consequence: >-
        an 8-GPU training holds the whole server for a day: an urgent fix after a failed
        safety check waits for it and can miss the Thursday release window

rented:
  - id: rented-8gpu
    name: "Rented dedicated 8xH100 node"
    provider: "Steppe Cloud (fictional)"
    site: "Almaty, Kazakhstan"
    gpus: 8
    price_per_gpu_hour: {amount: 1050, source: "quote SC-2026-07 §3.1"}
    min_commitment_months: 6
    scale_down_step_gpus: 8
    scale_down_notice_days: 30
    storage_gb: 20000
    storage_price_per_gb_month: {amount: 28, source: "quote SC-2026-07 §4.1"}
    egress_price_per_gb: {amount: 0, source: "quote SC-2026-07 §4.3 (egress included)"}
    labour:
      - role: platform engineer
        hours_per_month: 40
        rate_per_hour: {amount: 9500, source: "HR rate card 2026 §P2"}
      - role: ML engineer
        hours_per_month: 10
        rate_per_hour: {amount: 11000, source: "HR rate card 2026 §M3"}
    waiting:
      consequence: >-
        the node is ours but single: a training blocks evaluations for up to a day (two
        team-days without results in week 1)

  - id: kz-rented-2gpu
    name: "Local 2-GPU pool (hybrid base)"
    provider: "Qazaq AI Cloud (fictional)"
    site: "Almaty, Kazakhstan"
    standalone: false
    gpus: 2
    price_per_gpu_hour: {amount: 1150, source: "offer QAC-2026-112 §6"}
    min_commitment_months: 3
    scale_down_step_gpus: 1
    scale_down_notice_days: 14
    storage_gb: 5000
    storage_price_per_gb_month: {amount: 11, source: "offer QAC-2026-112 §3"}
    egress_price_per_gb: {amount: 0, source: "offer QAC-2026-112 §4"}

managed:
  - id: managed-ft
    name: "Managed fine-tuning endpoint"
    provider: "Nimbus ML (fictional global cloud)"
    site: "Frankfurt, EU"
    price_per_gpu_hour: {amount: 2650, source: "contract NMB-ENT-2026 Annex B §1.2"}
    billing_increment_minutes: 1
    startup_minutes_per_job: 9
    startup_billed: true
    loading_minutes_per_gb: 0.3
    loading_billed: true
    storage_price_per_gb_month: {amount: 14, source: "contract NMB-ENT-2026 Annex B §3.1"}
    retention_days: 30
    endpoint_price_per_hour: {amount: 1900, source: "contract NMB-ENT-2026 Annex B §2.4"}
    endpoint_hours_per_training: 18
    egress_price_per_gb: {amount: 48, source: "contract NMB-ENT-2026 Annex B §4.2"}
    fees:
      - name: "enterprise support plan"
        price_per_month: {amount: 120000, source: "contract NMB-ENT-2026 §7"}
    labour:
      - role: ML engineer
        hours_per_month: 28
        rate_per_hour: {amount: 11000, source: "HR rate card 2026 §M3"}
      - role: security engineer
        hours_per_month: 10
        rate_per_hour: {amount: 10500, source: "HR rate card 2026 §S1"}
    waiting:
      consequence: >-
        start depends on the vendor's shared capacity, with no start time in the
        contract: a fix after a failed safety check can miss the weekly release window
      assumed_monthly_cost: {amount: 150000, source: "team estimate, planning meeting 2026-05-12"}

  - id: kz-local
    name: "Local provider, managed fine-tuning (Kazakhstan)"
    provider: "Qazaq AI Cloud (fictional)"
    site: "Almaty, Kazakhstan (data stays in KZ)"
    price_per_gpu_hour: {amount: 2100, source: "offer QAC-2026-112 §2.1"}
    billing_increment_minutes: 60
    startup_minutes_per_job: 15
    startup_billed: true
    loading_minutes_per_gb: 0.5
    loading_billed: true
    storage_price_per_gb_month: {amount: 11, source: "offer QAC-2026-112 §3"}
    retention_days: 90
    egress_price_per_gb: {amount: 0, source: "offer QAC-2026-112 §4 (no egress fee inside KZ)"}
    fees:
      - name: "minimum monthly commitment"
        price_per_month: {amount: 250000, source: "offer QAC-2026-112 §5"}
    labour:
      - role: ML engineer
        hours_per_month: 30
        rate_per_hour: {amount: 11000, source: "HR rate card 2026 §M3"}
      - role: security engineer
        hours_per_month: 6
        rate_per_hour: {amount: 10500, source: "HR rate card 2026 §S1"}
    waiting:
      consequence: >-
        hourly billing and a 15-minute start make short evaluations slow and dear; no
        start-time SLO in the offer yet

hybrid:
  - id: hybrid-kz
    name: "Local 2-GPU pool + trainings on the local provider"
    base: kz-rented-2gpu
    overflow: kz-local
    overflow_rule:
      rule: kinds
      kinds: [train, restart]
    labour:
      - role: platform engineer
        hours_per_month: 24
        rate_per_hour: {amount: 9500, source: "HR rate card 2026 §P2"}
      - role: ML engineer
        hours_per_month: 30
        rate_per_hour: {amount: 11000, source: "HR rate card 2026 §M3"}
    waiting:
      consequence: >-
        evaluations start at once on the local pool; trainings wait for the provider
        (start not measured yet)
"""


def demo_costs_yaml() -> str:
    """The demo team's costs.yaml (KZT; fictional vendors, plausible 2026 prices)."""
    return DEMO_COSTS_YAML
