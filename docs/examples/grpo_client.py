"""A minimal GRPO data client for Switchboard's rollout route (standard library + requests).

Start the environment server, then point this at it and at the policy's vLLM endpoint(s):

    npx switchboard serve --domain carrier --port 8700
    python3 grpo_client.py --server http://127.0.0.1:8700 \\
        --endpoint http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B --lora carrier-lora \\
        --k 4 --tasks carrier-pay-balance-1,carrier-bill-inquiry-1 --policy-version step-0

For every group as it finishes it prints the group's advantages, and it builds what a GRPO
update consumes per agent turn: token ids (prompt + completion, exactly as the endpoint returned
them), the loss mask, and the sample's advantage. Plug `train_batch` into your optimizer step.
"""

import argparse
import json
import sys
import urllib.request

try:
    import requests
except ImportError:  # the route is plain HTTP: fall back to the standard library
    requests = None


def stream_rollout(server, body, token=None):
    """POST /rollout and yield each NDJSON line as it arrives (one per finished group)."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    if requests is not None:
        with requests.post(server.rstrip("/") + "/rollout", json=body, headers=headers, stream=True, timeout=3600) as r:
            if r.status_code != 200:
                raise SystemExit(f"rollout refused: HTTP {r.status_code}: {r.text}")
            for line in r.iter_lines():
                if line:
                    yield json.loads(line)
        return
    req = urllib.request.Request(
        server.rstrip("/") + "/rollout", data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=3600) as r:
            for line in r:
                if line.strip():
                    yield json.loads(line)
    except urllib.error.HTTPError as e:
        raise SystemExit(f"rollout refused: HTTP {e.code}: {e.read().decode('utf-8')}")


def train_batch(group):
    """Per agent turn: (input ids, loss mask, advantage). Turns without token ids are skipped."""
    batch = []
    for sample in group["samples"]:
        for turn in sample["turns"]:
            if turn["prompt_token_ids"] is None:
                continue
            ids = turn["prompt_token_ids"] + turn["completion_token_ids"]
            batch.append((ids, turn["loss_mask"], sample["advantage"]))
    return batch


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True, help="switchboard serve base URL")
    p.add_argument("--endpoint", action="append", required=True, help="policy base URL (repeatable)")
    p.add_argument("--model", required=True)
    p.add_argument("--lora", default=None)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--tasks", default=None, help="comma-separated task ids (default: all)")
    p.add_argument("--policy-version", required=True)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--token", default=None, help="bearer token of the server")
    a = p.parse_args(argv)
    body = {
        "base_urls": a.endpoint,
        "model": a.model,
        "lora": a.lora,
        "k": a.k,
        "policy_version": a.policy_version,
        "sampling": {"temperature": a.temperature, "max_tokens": a.max_tokens},
    }
    if a.tasks:
        body["task_ids"] = a.tasks.split(",")
    for msg in stream_rollout(a.server, body, a.token):
        if msg["type"] == "group":
            advs = " ".join(f"{s['advantage']:+.3f}" for s in msg["samples"])
            batch = train_batch(msg)
            trainable = sum(sum(mask) for _, mask, _ in batch)
            print(f"{msg['group_id']} mean={msg['mean_reward']:.2f} advantages: {advs} "
                  f"turns={len(batch)} trainable_tokens={trainable}")
        elif msg["type"] == "failed":
            print(f"{msg['group_id']} FAILED: {'; '.join(msg['reasons'])}", file=sys.stderr)
        elif msg["type"] == "summary":
            print(f"done: {msg['groups']} groups, {len(msg['failed'])} failed, token ids: {msg['token_ids']}")
        else:
            raise SystemExit(f"server error: {msg.get('message')}")


if __name__ == "__main__":
    main()
