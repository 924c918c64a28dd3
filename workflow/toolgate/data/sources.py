"""Where the external cross-check data comes from: each set's pinned repository, commit and file checksums (from
its SOURCE file), and its licence. Data, not code: the external study fetches and verifies the files
(:mod:`toolgate.external.sources`), the data card and the report name their provenance."""

# Pinned sources (from each dataset's SOURCE file) and the sha256 of every file used.
PINS = {
    "functionchat": {
        "repo": "kakao/FunctionChat-Bench",
        "commit": "cb32af378a2b94ee84fc4d3cb50302377c7ff679",
        "path": "data",
        "files": {
            "FunctionChat-Singlecall.jsonl": "3f74ed04cb9f1e0b6bc16845e5b6c69a3e75363f084b00825c9794df071a4aaf",
            "FunctionChat-CallDecision.jsonl": "7fe66417cd82a6d40741d4f3d850c9ecb80df192819564303bdad226db5d1625",
        },
    },
    "bfcl": {
        "repo": "ShishirPatil/gorilla",
        "commit": "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8",
        "path": "berkeley-function-call-leaderboard/bfcl_eval/data",
        "files": {
            "BFCL_v4_multiple.json": "aef168155ebd74b7ac2401198b201343bc7d16d7a3d7e0d4e6d8ee82c6969b2a",
            "BFCL_v4_live_multiple.json": "fd8ccfad4d911420d0e3341dbe2fff77d1d341da934248b9bb2bda24ab3a10c8",
            "BFCL_v4_irrelevance.json": "2b6ed4c2e992cdcf5f1678a701851f944bef7550ee026ed1ddb89efed5be01a6",
            "BFCL_v4_live_irrelevance.json": "6559fda2beaceb609a2cd2e504c65b4a56cb448e1ef88fddfd199e163d163349",
            "possible_answer/BFCL_v4_multiple.json": "244e00ce9395df948bcafc7bee64e8f9c87ef70887587d83cae45b13699f3047",
            "possible_answer/BFCL_v4_live_multiple.json": "97e90d59c5bd76c55a2920ce93e5566e9046307d3f558578f085f9d3a56c3084",
        },
    },
    "clinc150": {
        "repo": "clinc/oos-eval",
        "commit": "828f8093932c8fe6ca7936c3d2e52903b1c523de",
        "path": "data",
        "files": {"data_full.json": "36923c3705a59e08fe9c3883d8bc2dd966ef93e22cb78ac41171782a698d56e0"},
    },
}

# The external cross-check sets and their licences (the LICENSE beside each set's files; FunctionChat-Bench's
# NOTICE.md names its copyright holder); repository and commit from the pins.
EXTERNAL_LICENCES = {"functionchat": ("Kakao Corp.'s FunctionChat-Bench", "Apache-2.0"),
                     "bfcl": ("BFCL v4, the Berkeley Function Calling Leaderboard", "Apache-2.0"),
                     "clinc150": ("CLINC150 (Larson et al. 2019)", "CC-BY-3.0")}
