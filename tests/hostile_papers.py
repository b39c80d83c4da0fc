"""Papers whose titles and sentences carry terminal escapes (OSC 8 links, CSI colours, BEL, C1
controls), shared by tests/test_terminal_escapes.py and bench/hostile_terminal.py."""

#: A disguised link (OSC 8 ... BEL), then red text: what the hostile trial put at the end of a title.
LINK = "\x1b]8;;http://evil/\x07click\x1b]8;;\x07\x1b[31m"

PAPERS = [  # (id, year, title, abstract); "RL\x9bNet" is named by the 2024 papers only, so trends ranks it
    ("-zBN5sBzdvr", 2023, "Group Relative Policy Optimization" + LINK,
     "We propose GRPO, a reinforcement learning method for mathematical reasoning. GRPO reaches 80.2% "
     "accuracy on GSM8K, outperforming PPO\x1b[2J. We evaluate GRPO on MATH."),
    ("p2", 2023, "Proximal policy optimization revisited" + LINK,
     "We study PPO for mathematical reasoning. PPO reaches 75.1% accuracy on GSM8K\x07. "
     "We compare PPO with GRPO on MATH and GSM8K."),
    ("p3", 2023, "Reward models\x9b31m for reasoning\r",
     "We propose a reward model for mathematical reasoning. It reaches 70.4% accuracy on GSM8K. "
     "We compare it with PPO and GRPO."),
    ("p4", 2024, "RL\x9bNet for reasoning" + LINK,
     "We propose RL\x9bNet, a reinforcement learning method for mathematical reasoning. RL\x9bNet reaches "
     "85.0% accuracy on GSM8K\x1b[31m, outperforming GRPO. We evaluate RL\x9bNet on MATH."),
    ("p5", 2024, "Scaling RL\x9bNet\x1b]8;;http://evil/\x07",
     "We scale RL\x9bNet for mathematical reasoning. RL\x9bNet reaches 86.1% accuracy on GSM8K. "
     "We compare RL\x9bNet with GRPO on MATH."),
    ("p6", 2024, "RL\x9bNet in practice\x85\x7f",
     "We apply RL\x9bNet to mathematical reasoning. RL\x9bNet reaches 84.0% accuracy on GSM8K. "
     "We compare RL\x9bNet with PPO."),
]
