"""Switchboard as a TRL `environment_factory` environment, over the OpenEnv server.

TRL's GRPOTrainer creates one environment per rollout slot with `environment_factory`, calls its
`reset(**row)` before generating, exposes its other public methods as tools (schemas from their
signatures and Google-style docstrings), and hands the environments to reward functions. This
module builds such a class for whatever domain `switchboard serve` serves: one method per agent
tool (from the server's MCP `tools/list`), plus `speak` to talk to the caller.

    npx switchboard serve --domain carrier --port 8700
    # in the trainer:
    from trl import GRPOConfig, GRPOTrainer
    from trl_environment import make_environment_class, switchboard_reward
    Env = make_environment_class("http://127.0.0.1:8700")
    trainer = GRPOTrainer(model=..., train_dataset=ds,  # rows: {"prompt": [...], "task_id": "..."}
                          reward_funcs=switchboard_reward, environment_factory=Env, args=GRPOConfig(...))

Standard library only (uses openenv_client.py beside this file).
"""

import inspect
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openenv_client import HTTPEnvClient, WSEnvClient  # noqa: E402

_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


def _caller_text(observation):
    """What the caller said in an observation (text of its user messages)."""
    return "\n".join(m["content"] for m in observation["messages"] if m["role"] == "user" and m["content"])


class SwitchboardEnvironment:
    """One phone call at a time on a Switchboard OpenEnv server (one WebSocket session)."""

    server_url = "http://127.0.0.1:8700"
    token = None

    def __init__(self):
        self._env = WSEnvClient(self.server_url, token=self.token)
        self.reward = 0.0
        self.process_reward = 0.0
        self.components = {}
        self.done = False

    def reset(self, task_id=None, seed=None, **kwargs):
        """Start a call; returns what the caller said first (TRL appends it to the prompt)."""
        args = {k: v for k, v in (("task_id", task_id), ("seed", seed)) if v is not None}
        result = self._env.reset(**args)
        self.reward, self.process_reward, self.components, self.done = 0.0, 0.0, {}, result.done
        return _caller_text(result.observation)

    def _take(self, action):
        if self.done:
            return "The call has ended."
        result = self._env.step(action)
        meta = result.observation["metadata"]
        self.process_reward += meta["process_reward"]
        self.done = result.done
        if result.done and meta["reward"] is not None:
            self.reward = meta["reward"]["task_reward"]
            self.components = meta["reward"]["components"]
        return result.observation

    def speak(self, text: str) -> str:
        """Say something to the caller and hear the answer.

        Args:
            text: What to say, as spoken words.
        """
        obs = self._take({"content": text})
        if isinstance(obs, str):
            return obs
        return _caller_text(obs) or ("The call has ended." if self.done else "")


def _tool_method(tool):
    """A method that calls one agent tool, with a signature and docstring TRL can read."""
    name, schema = tool["name"], tool.get("inputSchema") or {}
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations = {}
    for pname, spec in props.items():
        py = _PY_TYPES.get(spec.get("type"), str)
        annotations[pname] = py
        default = inspect.Parameter.empty if pname in required else None
        params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=py))
    annotations["return"] = str

    def method(self, **kwargs):
        args = {k: v for k, v in kwargs.items() if v is not None}
        obs = self._take({"type": "call_tool", "tool_name": name, "arguments": args})
        if isinstance(obs, str):
            return obs
        results = [m["content"] for m in obs["messages"] if m["role"] == "tool"]
        return results[0] if results else json.dumps(obs["messages"])

    lines = [tool.get("description") or name, "", "Args:"]
    for pname, spec in props.items():
        lines.append(f"    {pname}: {spec.get('description', pname)}")
    method.__name__ = name
    method.__qualname__ = f"SwitchboardEnvironment.{name}"
    method.__doc__ = "\n".join(lines) if props else (tool.get("description") or name)
    method.__signature__ = inspect.Signature(params, return_annotation=str)
    method.__annotations__ = annotations
    return method


def make_environment_class(server_url, token=None):
    """A SwitchboardEnvironment subclass with one method per agent tool the server lists."""
    tools = HTTPEnvClient(server_url, token=token).mcp("tools/list")["result"]["tools"]
    reserved = {"reset", "speak"}
    methods = {t["name"]: _tool_method(t) for t in tools if t["name"] not in reserved}
    return type(
        "SwitchboardToolEnvironment",
        (SwitchboardEnvironment,),
        {"server_url": server_url, "token": token, **methods},
    )


def switchboard_reward(environments, **kwargs):
    """TRL reward function: each environment's task reward (0 until its call ended)."""
    return [env.reward for env in environments]
