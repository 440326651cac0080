"""Write the agent-eval-harness-shaped config corpus (``configs/``, ``eval/``, ``root/``).

Each config is composed from fragments in the shapes that tool's documentation and test
suite use (written here, not copied). Run ``python tests/aeh/corpus/make_corpus.py``
after editing; ``expected.json`` is then re-recorded with that tool's own loader (see
tests/aeh/test_corpus.py for how).
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent

TARGETS = {
    "skill": {"execution": {"mode": "case", "skill": "rfe-create", "arguments": "{prompt}"}},
    "skill-opt": {"execution": {"skill": "triage.bot", "arguments": "--ticket {ticket?} {prompt}"}},
    "top-skill": {"skill": "legacy-skill", "execution": {"arguments": "{prompt}"}},
    "prompt": {"name": "docs-qa", "execution": {"prompt": "{{ input.prompt }}"}},
    "raw-args": {"name": "Repo Tasks (v2)", "skill": None,
                 "execution": {"mode": "case", "arguments": "Do this:\n{prompt}\n", "timeout": 300}},
    "named-skill": {"name": "My Skill's Eval", "execution": {"skill": "summarise", "arguments": "{prompt}"}},
    "unnamed": {"execution": {"prompt": "{{ input.prompt }}"}},
    "steps": {"name": "pipeline", "execution": {"steps": [
        {"id": "draft", "skill": "rfe-create", "arguments": "{prompt}"},
        {"id": "review", "prompt": "Review the draft in this workspace.", "timeout": 120,
         "on_failure": "continue", "env": {"STAGE": "review"}}]}},
    "cli": {"name": "cli-agent", "execution": {"skill": "solver", "arguments": "{prompt}"},
            "runner": {"type": "cli", "command": "bash {config_dir}/run.sh {agent} {args} {model}"}},
}

RUNNERS = {
    "none": {},
    "typeless": {"runner": {"effort": "high"}},
    "claude": {"runner": {"type": "claude-code", "effort": "medium", "system_prompt": "Be brief.",
                          "permission_mode": "acceptEdits"}},
    "claude-env": {"runner": {"type": "claude-code", "env": {"API_TOKEN": "$AEH_CORPUS_TOKEN",
                                                             "MODE": "eval"},
                              "settings": {"env": {"FOO": "1"}}}},
    "plugins": {"runner": {"plugin_dirs": ["plugins/helper"]}},
    "repo": {"runner": {"type": "claude-code", "workspace_mode": "repo"},
             "permissions": {"deny": [{"path": "eval/", "tools": ["Read", "Grep", "Bash"]},
                                      "mcp__*"]}},
}

MATRICES = {
    "none": {},
    "model": {"matrix": {"factors": {"model": ["claude-sonnet-4-6", "claude-opus-4-6"]}}},
    "model-effort": {"matrix": {"factors": {"model": ["sonnet", "opus"],
                                            "effort": ["low", "high"]}, "replications": 2}},
    "context": {"matrix": {"factors": {"context": ["none", "kg"]}}},
    "three": {"matrix": {"factors": {"model": ["a", "b", "c"], "temperature": [0, 1],
                                     "subagent": ["haiku", "sonnet"]}, "replications": 3}},
}

JUDGES = {
    "check": {"judges": [{"name": "has_output", "check": "return bool(outputs.get('output')), 'ok'"}]},
    "llm": {"models": {"judge": "claude-haiku-4-5"},
            "judges": [{"name": "quality", "feedback_type": "int", "score_range": [1, 5],
                        "prompt": "Rate 1-5.\n{{ outputs.output }}"}]},
    "rubric": {"models": {"judge": "claude-haiku-4-5"},
               "judges": [{"name": "cites", "llm_rubric": "The answer cites its sources.",
                           "context": ["rubric.md"], "feedback_type": "bool"}]},
    "mixed": {"models": {"judge": "claude-haiku-4-5"},
              "judges": [{"name": "passes", "check": "return True, 'fine'",
                          "if": "not annotations.get('skip', False)"},
                         {"name": "score", "feedback_type": "float", "prompt": "{{ conversation }}"},
                         {"name": "limits", "check": "return len(outputs.get('output') or '') < arguments['n'], 'len'",
                          "arguments": {"n": 2000}}],
              "thresholds": {"passes": {"min_pass_rate": 0.8, "max_error_rate": 0.1},
                             "score": {"min_mean": 3.0}},
              "reward": {"formula": "weighted", "weights": {"passes": 1, "score": 2, "gone": 1}}},
}

JUDGES["builtin"] = {
    "models": {"judge": "claude-haiku-4-5"},
    "judges": [{"name": "budget", "builtin": "efficiency/cost_budget",
                "arguments": {"max_cost_usd": 0.5}},
               {"name": "tools_ok", "builtin": "process/tool_call_validation"},
               {"name": "docs_read", "builtin": "process/consulted_docs",
                "arguments": {"min_coverage": 0.5, "match": "basename"}},
               {"name": "complete", "builtin": "quality/output_completeness",
                "arguments": {"strictness": "high"}},
               {"name": "safe", "builtin": "safety/no_harmful_content"}]}

EXTRAS = {
    "plain": {},
    "mlflow": {"mlflow": {"experiment": "team-evals", "tags": {"team": "ml"}}},
    "hooks": {"hooks": {"before_all": [{"command": "echo setup", "timeout": 30}],
                        "before_each": [{"command": "test -n \"$CASE_ID\"", "on_failure": "continue"}],
                        "after_all": [{"command": "echo done"}]}},
    "meta": {"generation": {"strategy": "skill"}, "traces": {"stdout": True, "events": False},
             "outputs": [{"path": "artifacts", "schema": "Markdown files",
                          "types": {"*.md": "document"}}],
             "dataset": {"workspace": {"files": ["fixtures"]}},
             "execution": {"parallelism": 3, "env": {"JIRA": "$AEH_CORPUS_JIRA", "LEVEL": 2}}},
    "perms": {"permissions": {"allow": ["Read", {"path": "src/", "tools": ["Edit", "Write"]}],
                              "deny": ["WebFetch"]}},
}

#: configs that tool rejects (each must exit 2 here too): name -> config
REJECTED = {
    "bad-mode": {"execution": {"mode": "parallel", "prompt": "x"}},
    "skill-and-prompt": {"execution": {"skill": "a", "prompt": "b"}},
    "bad-workspace-mode": {"execution": {"prompt": "x"}, "runner": {"workspace_mode": "sandbox"}},
    "scalar-level": {"execution": {"prompt": "x"}, "matrix": {"factors": {"model": "opus"}}},
    "empty-level": {"execution": {"prompt": "x"}, "matrix": {"factors": {"model": []}}},
    "zero-reps": {"execution": {"prompt": "x"},
                  "matrix": {"factors": {"model": ["a"]}, "replications": 0}},
    "bool-reps": {"execution": {"prompt": "x"},
                  "matrix": {"factors": {"model": ["a"]}, "replications": True}},
    "matrix-list": {"execution": {"prompt": "x"}, "matrix": [{"model": "a"}]},
    "no-factors": {"execution": {"prompt": "x"}, "matrix": {"factors": {}}},
    "bad-range": {"execution": {"prompt": "x"},
                  "judges": [{"name": "q", "prompt": "rate", "score_range": [5, 1]}]},
    "bool-with-range": {"execution": {"prompt": "x"},
                        "judges": [{"name": "q", "prompt": "ok?", "feedback_type": "bool",
                                    "score_range": [0, 1]}]},
    "int-fraction": {"execution": {"prompt": "x"},
                     "judges": [{"name": "q", "prompt": "rate", "feedback_type": "int",
                                 "score_range": [0, 2.5]}]},
    "reward-unknown-judge": {"execution": {"prompt": "x"},
                             "judges": [{"name": "a", "check": "return True, ''"}],
                             "reward": {"judge": "b"}},
    "reward-negative": {"execution": {"prompt": "x"},
                        "judges": [{"name": "a", "check": "return True, ''"}],
                        "reward": {"weights": {"a": -1}}},
    "reward-judge-weights": {"execution": {"prompt": "x"},
                             "judges": [{"name": "a", "check": "return True, ''"}],
                             "reward": {"judge": "a", "weights": {"a": 1}}},
    "hook-on-failure": {"execution": {"prompt": "x"},
                        "hooks": {"before_all": [{"command": "true", "on_failure": "ignore"}]}},
    "hook-timeout": {"execution": {"prompt": "x"},
                     "hooks": {"after_each": [{"command": "true", "timeout": 0}]}},
    "steps-and-skill": {"execution": {"skill": "a", "steps": [{"id": "s1", "prompt": "x"}]}},
    "judge-args-list": {"execution": {"prompt": "x"},
                        "judges": [{"name": "a", "check": "return True, ''", "arguments": [1]}]},
    "generation-strategy": {"execution": {"prompt": "x"}, "generation": {"strategy": "magic"}},
    "generation-seeds": {"execution": {"prompt": "x"},
                         "generation": {"strategy": "skill",
                                        "seeds": [{"category": "a", "count": 1, "prompt": "p"}]}},
    "dataset-dotdot": {"execution": {"prompt": "x"}, "dataset": {"path": "../elsewhere"}},
    "output-root": {"execution": {"prompt": "x"}, "outputs": [{"path": "."}]},
    "builtin-llm-range": {"execution": {"prompt": "x"},
                          "judges": [{"name": "b", "builtin": "safety/no_harmful_content",
                                      "score_range": [1, 5]}]},
    "unknown-builtin": {"execution": {"prompt": "x"},
                        "judges": [{"name": "b", "builtin": "quality/nonexistent"}]},
    "skill-slash": {"execution": {"skill": "team/skill", "arguments": "{prompt}"}},
    "step-dup-ids": {"execution": {"steps": [{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}]}},
    "step-no-target": {"execution": {"steps": [{"id": "a"}]}},
    "step-bad-judge": {"execution": {"steps": [{"id": "a", "prompt": "x"}]},
                       "judges": [{"name": "j", "check": "return True, ''", "step": "b"}]},
    "step-without-steps": {"execution": {"prompt": "x"},
                           "judges": [{"name": "a", "check": "return True, ''", "step": "s1"}]},
    "ws-files-dotdot": {"execution": {"prompt": "x"},
                        "dataset": {"path": "cases", "workspace": {"files": ["../secret"]}}},
    "runner-command-int": {"execution": {"prompt": "x"}, "runner": {"type": "cli", "command": 5}},
}


def _merge(*parts: dict) -> dict:
    out: dict = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = _merge(out[key], value)
            else:
                out[key] = value
    return out


def _dump(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _cases(root: Path) -> None:
    for i, (prompt, ticket) in enumerate([("Summarise the doc.", "T-1"),
                                          ("Fix the failing test.", None)], start=1):
        case = root / "cases" / f"case-{i:03d}"
        case.mkdir(parents=True, exist_ok=True)
        body = {"prompt": prompt, **({"ticket": ticket} if ticket else {})}
        (case / "input.yaml").write_text(yaml.safe_dump(body))
        (case / "annotations.yaml").write_text(yaml.safe_dump({"skip": i == 2}))


def main() -> None:
    for sub in ("configs", "eval", "root"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    configs = HERE / "configs"
    _cases(configs)
    (configs / "rubric.md").write_text("Sources are links or file paths.\n")
    (configs / "run.sh").write_text("#!/bin/sh\necho \"$@\"\n")
    plugin = configs / "plugins" / "helper" / ".claude-plugin"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text('{"name": "helper"}\n')
    base = {"dataset": {"path": "cases", "schema": "Each case has input.yaml with a prompt."}}
    n = 0
    # a covering design: every target x runner, then matrices, judges and extras rotated
    for i, (target, runner) in enumerate(itertools.product(TARGETS, RUNNERS)):
        if target == "cli" and runner != "none":
            continue  # a cli target brings its own runner
        for j, matrix in enumerate(MATRICES):
            if (i + j) % 2:
                continue
            judges = list(JUDGES)[(i + j) % len(JUDGES)]
            extra = list(EXTRAS)[(i * 3 + j) % len(EXTRAS)]
            if extra == "perms" and runner not in ("none", "typeless", "claude", "plugins"):
                extra = "plain"
            if extra == "perms" and target == "cli":
                extra = "plain"
            data = _merge(TARGETS[target], RUNNERS[runner], base, MATRICES[matrix],
                          JUDGES[judges], EXTRAS[extra])
            if (i + j) % 3 == 0 and matrix != "model" and "model" not in str(MATRICES[matrix]):
                data = _merge(data, {"models": {"skill": "claude-sonnet-4-6"}})
            n += 1
            _dump(configs / f"{n:03d}-{target}-{runner}-{matrix}-{judges}-{extra}.yaml", data)
    for name, body in REJECTED.items():
        _dump(configs / f"x-{name}.yaml", _merge(base, body))
    # path-derived names: eval/<dir>/eval.yaml, a root eval.yaml, a flat eval/<x>.yaml
    for sub in ("user-guides", "api-docs"):
        root = HERE / "eval" / sub
        _cases(root)
        _dump(root / "eval.yaml", _merge(base, TARGETS["unnamed"], MATRICES["model"]))
    _dump(HERE / "eval" / "flat-one.yaml",
          {"execution": {"prompt": "{{ input.prompt }}"}, "dataset": {"path": "user-guides/cases"}})
    _cases(HERE / "root")
    _dump(HERE / "root" / "eval.yaml", _merge(base, TARGETS["skill"], RUNNERS["claude"],
                                              MATRICES["model-effort"], JUDGES["llm"],
                                              EXTRAS["mlflow"]))
    print(f"{n} composed + {len(REJECTED)} rejected + 4 path-named configs")


if __name__ == "__main__":
    main()
