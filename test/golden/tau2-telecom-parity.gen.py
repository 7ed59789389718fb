"""Write tau2-telecom-parity.json: tau2-bench's own telecom code run on ../shared/tau2/telecom.

Usage (tau2-bench's source at commit a2c024725189, with its `src` on PYTHONPATH; modules tau2's
telecom code does not need at run time -- loguru, addict, deepdiff, dotenv, toml, yaml,
docstring_parser -- may be stand-ins, see test/golden/README.md):

    TAU2_DATA_DIR=<dir with tau2/domains/telecom> python3 test/golden/tau2-telecom-parity.gen.py > out.json

For every task of the `base` split: the sha256 hashes tau2 computes of both databases (agent
`db.toml` side and user `user_db.toml` side) after the task's initialization; each reference
action's tool message when the reference is replayed as a conversation (tau2's `get_response`:
state sync after each successful call); the hashes after that replay and its final sync; the env
assertion results on it; and the hashes of tau2's evaluator gold environment (the reference
actions through `make_tool_call`, no sync between them). Then probe conversations that call every
agent and user tool, with error cases, and record every tool message.
"""

import json
import sys

from tau2.data_model.message import ToolCall
from tau2.data_model.tasks import Task
from tau2.domains.telecom import user_tools as user_tools_module
from tau2.domains.telecom.environment import get_environment, get_tasks, get_tasks_split
from tau2.domains.telecom.user_data_model import PerformanceLevel, VpnDetails


def fresh_env():
    # tau2 keeps the default VPN details in a class attribute that break_vpn mutates; a fresh
    # process per task has it pristine, so reset it here.
    user_tools_module.TelecomUserTools.default_vpn_details = VpnDetails(
        server_address="192.168.1.1", protocol="OpenVPN", server_performance=PerformanceLevel.EXCELLENT
    )
    return get_environment()


def hashes(env):
    return {"db": env.get_db_hash(), "user_db": env.get_user_db_hash()}


def init(env, task):
    env.set_state(
        initialization_data=task.initial_state.initialization_data,
        initialization_actions=task.initial_state.initialization_actions,
        message_history=[],
    )


seq = [0]


def respond(env, requestor, name, arguments):
    seq[0] += 1
    msg = env.get_response(ToolCall(id=f"c{seq[0]}", name=name, arguments=arguments, requestor=requestor))
    return {"requestor": requestor, "name": name, "arguments": arguments, "content": msg.content, "error": msg.error}


def reference_entry(task):
    env = fresh_env()
    init(env, task)
    entry = {"id": task.id, "init": hashes(env)}
    actions = task.evaluation_criteria.actions or []
    entry["reference"] = [
        {k: v for k, v in respond(env, a.requestor, a.name, a.arguments).items() if k in ("content", "error")}
        for a in actions
    ]
    env.sync_tools()
    entry["replay"] = hashes(env)
    entry["env_assertions"] = [
        env.run_env_assertion(a, raise_assertion_error=False) for a in task.evaluation_criteria.env_assertions or []
    ]
    gold = fresh_env()
    init(gold, task)
    errors = []
    for i, a in enumerate(actions):
        try:
            gold.make_tool_call(tool_name=a.name, requestor=a.requestor, **a.arguments)
        except Exception as e:  # the evaluator logs and goes on
            errors.append({"index": i, "error": str(e)})
    entry["gold"] = hashes(gold)
    entry["gold_errors"] = errors
    return entry


A, U = "assistant", "user"

# Probe conversations: (task index in the base split, calls).
PROBES = [
    (0, [
        (A, "get_customer_by_phone", {"phone_number": "555-123-2002"}),
        (A, "get_customer_by_phone", {"phone_number": "555-000-0000"}),
        (A, "get_customer_by_id", {"customer_id": "C1001"}),
        (A, "get_customer_by_id", {"customer_id": "C9999"}),
        (A, "get_customer_by_name", {"full_name": "john smith", "dob": "1985-06-15"}),
        (A, "get_customer_by_name", {"full_name": "John Smith", "dob": "1985-06-16"}),
        (A, "get_details_by_id", {"id": "L1002"}),
        (A, "get_details_by_id", {"id": "D1001"}),
        (A, "get_details_by_id", {"id": "B1001"}),
        (A, "get_details_by_id", {"id": "C1002"}),
        (A, "get_details_by_id", {"id": "P1002"}),
        (A, "get_details_by_id", {"id": "L9999"}),
        (A, "get_details_by_id", {"id": "X1"}),
        (A, "get_bills_for_customer", {"customer_id": "C1001"}),
        (A, "get_bills_for_customer", {"customer_id": "C1001", "limit": 1}),
        (A, "get_bills_for_customer", {"customer_id": "C0"}),
        (A, "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "get_data_usage", {"customer_id": "C1001", "line_id": "L1003"}),
        (A, "get_data_usage", {"customer_id": "C1002", "line_id": "L1002"}),
        (A, "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 0.5}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0}),
        (A, "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "travel"}),
        (A, "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "travel"}),
        (U, "check_status_bar", {}),
        (U, "check_network_status", {}),
        (A, "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "get_bills_for_customer", {"customer_id": "C1001", "limit": 2}),
        (A, "send_payment_request", {"customer_id": "C1001", "bill_id": "B9999"}),
        (A, "send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}),
        (A, "send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}),
        (U, "check_payment_request", {}),
        (U, "make_payment", {}),
        (U, "check_payment_request", {}),
        (A, "get_details_by_id", {"id": "B1001"}),
        (U, "make_payment", {}),
        (A, "transfer_to_human_agents", {"summary": "Customer wants a human."}),
        (A, "get_customer_by_phone", {}),
        (A, "no_such_tool", {}),
    ]),
    (0, [
        (U, "check_status_bar", {}),
        (U, "check_network_status", {}),
        (U, "run_speed_test", {}),
        (U, "toggle_airplane_mode", {}),
        (U, "check_network_status", {}),
        (U, "run_speed_test", {}),
        (U, "toggle_roaming", {}),
        (U, "run_speed_test", {}),
        (U, "check_network_mode_preference", {}),
        (U, "set_network_mode_preference", {"mode": "3g_only"}),
        (U, "run_speed_test", {}),
        (U, "set_network_mode_preference", {"mode": "2g_only"}),
        (U, "run_speed_test", {}),
        (U, "can_send_mms", {}),
        (U, "set_network_mode_preference", {"mode": "5g"}),
        (U, "set_network_mode_preference", {"mode": "4g_only"}),
        (U, "run_speed_test", {}),
        (U, "toggle_data_saver_mode", {}),
        (U, "check_data_restriction_status", {}),
        (U, "run_speed_test", {}),
        (U, "check_status_bar", {}),
        (U, "toggle_data_saver_mode", {}),
        (U, "check_data_restriction_status", {}),
        (U, "check_sim_status", {}),
        (U, "reseat_sim_card", {}),
        (U, "toggle_data", {}),
        (U, "check_status_bar", {}),
        (U, "run_speed_test", {}),
        (U, "toggle_data", {}),
        (U, "check_apn_settings", {}),
        (U, "reset_apn_settings", {}),
        (U, "check_apn_settings", {}),
        (U, "reboot_device", {}),
        (U, "set_apn_settings", {"apn_settings": {"apn_name": "broken", "mmsc_url": None}}),
        (U, "check_apn_settings", {}),
        (U, "check_network_status", {}),
        (U, "set_apn_settings", {"apn_settings": {"apn_name": "internet", "mms_port": 8080}}),
        (U, "check_wifi_status", {}),
        (U, "toggle_wifi", {}),
        (U, "check_wifi_status", {}),
        (U, "check_status_bar", {}),
        (U, "check_wifi_calling_status", {}),
        (U, "toggle_wifi_calling", {}),
        (U, "check_wifi_calling_status", {}),
        (U, "toggle_wifi_calling", {}),
        (U, "check_vpn_status", {}),
        (U, "connect_vpn", {}),
        (U, "connect_vpn", {}),
        (U, "check_vpn_status", {}),
        (U, "check_status_bar", {}),
        (U, "run_speed_test", {}),
        (U, "disconnect_vpn", {}),
        (U, "disconnect_vpn", {}),
        (U, "check_vpn_status", {}),
        (U, "check_installed_apps", {}),
        (U, "check_app_status", {"app_name": "messaging"}),
        (U, "check_app_status", {"app_name": "browser"}),
        (U, "check_app_status", {"app_name": "camera"}),
        (U, "check_app_permissions", {"app_name": "messaging"}),
        (U, "check_app_permissions", {"app_name": "camera"}),
        (U, "grant_app_permission", {"app_name": "messaging", "permission": "NETWORK"}),
        (U, "grant_app_permission", {"app_name": "messaging", "permission": "camera"}),
        (U, "grant_app_permission", {"app_name": "camera", "permission": "sms"}),
        (U, "check_app_permissions", {"app_name": "messaging"}),
        (U, "can_send_mms", {}),
        (U, "toggle_airplane_mode", {}),
        (U, "toggle_wifi", {}),
        (U, "check_status_bar", {}),
        (U, "check_network_status", {}),
        (U, "can_send_mms", {}),
        (U, "check_payment_request", {}),
        (U, "make_payment", {}),
        (U, "toggle_airplane_mode", {"on": True}),
        (U, "get_customer_by_id", {"customer_id": "C1001"}),
    ]),
]


def probe_tasks(base):
    """Extra probes: one task per distinct initialization function set, check tools only."""
    checks = [
        "check_status_bar", "check_network_status", "check_sim_status", "run_speed_test", "check_apn_settings",
        "check_vpn_status", "check_app_permissions", "can_send_mms", "check_payment_request",
        "check_wifi_calling_status", "check_data_restriction_status", "check_network_mode_preference",
    ]
    seen, out = set(), []
    for i, task in enumerate(base):
        key = tuple(sorted({a.func_name for a in task.initial_state.initialization_actions}))
        if key in seen:
            continue
        seen.add(key)
        calls = [(U, c, {"app_name": "messaging"} if c == "check_app_permissions" else {}) for c in checks]
        out.append((i, calls))
    return out


def main():
    base_ids = get_tasks_split()["base"]
    base = get_tasks("base")
    assert sorted(t.id for t in base) == sorted(base_ids)
    env0 = fresh_env()
    doc = {
        "data": "tau2-bench telecom data at commit a2c024725189 (../shared/tau2/telecom/), tau2's own telecom code",
        "hash": "sha256 of json.dumps(model_dump(), sort_keys=True, default=str), tau2's get_db_hash",
        "pristine": hashes(env0),
        "agent_tools": sorted(env0.tools.get_tools().keys()) if False else sorted(env0.tools.tools.keys()),
        "user_tools": sorted(env0.user_tools.tools.keys()),
        "tasks": [reference_entry(t) for t in base],
        "probes": [],
    }
    for index, calls in PROBES + probe_tasks(base):
        task = base[index]
        env = fresh_env()
        init(env, task)
        recorded = [respond(env, r, n, a) for r, n, a in calls]
        doc["probes"].append({"task_id": task.id, "calls": recorded, "final": hashes(env)})
    called = {(c["requestor"], c["name"]) for p in doc["probes"] for c in p["calls"]}
    missing = [n for n in doc["agent_tools"] if (A, n) not in called] + [
        n for n in doc["user_tools"] if (U, n) not in called
    ]
    assert not missing, missing
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


# Numeric edge cases, written to tau2-telecom-edges.json by `... tau2-telecom-parity.gen.py edges`.
EDGES = [
    (0, [
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 0.125}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 1.3375}),
        (A, "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
        (A, "get_bills_for_customer", {"customer_id": "C1001", "limit": -1}),
        (A, "get_bills_for_customer", {"customer_id": "C1001", "limit": 0}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 1e308}),
        (A, "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 1e308}),
        (A, "get_details_by_id", {"id": "L1002"}),
        (U, "check_payment_request", {}),
    ]),
]


def edges():
    base = get_tasks("base")
    doc = {"data": "as tau2-telecom-parity.json: numeric edge cases", "probes": []}
    for index, calls in EDGES:
        task = base[index]
        env = fresh_env()
        init(env, task)
        recorded = [respond(env, r, n, a) for r, n, a in calls]
        doc["probes"].append({"task_id": task.id, "calls": recorded, "final": hashes(env)})
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    edges() if sys.argv[1:] == ["edges"] else main()
