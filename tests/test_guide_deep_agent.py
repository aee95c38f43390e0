"""docs/guides/deep-agent.md: each yaml block is a whole spec that validates, without errors
or warnings, in the folder the guide's setup commands make (issue 20: its fragments gave 7
errors when pasted)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from click.testing import CliRunner

from agentspec.cli import cli
from tests.buildkit import ROOT

GUIDE = ROOT / "docs" / "guides" / "deep-agent.md"


def test_every_yaml_block_of_the_deep_agent_guide_validates(tmp_path: Path) -> None:
    text = GUIDE.read_text()
    setup = re.findall(r"```sh\n(.*?)```", text, re.S)[0]
    assert "mkdir" in setup, "the guide's first shell block makes the folder"
    subprocess.run(["bash", "-e", "-c", setup], cwd=tmp_path, check=True)
    folder = tmp_path / "assistant"
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for index, block in enumerate(blocks):
        (folder / "assistant.yaml").write_text(block)
        done = CliRunner().invoke(cli, ["validate", str(folder / "assistant.yaml")])
        assert done.exit_code == 0 and "0 errors, 0 warnings" in done.output, (index,
                                                                             done.output)
