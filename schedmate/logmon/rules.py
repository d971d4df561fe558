"""Log rules: regex templates with named groups and a kind, and the built-in rules for common training
frameworks (the matcher that applies a rule list is `matching.RuleSet`).

A rule's named groups are *meanings* (see `FIELDS`); its kind is one of

- `progress`: a progress line (fields such as `step`, `loss`; a line with only totals is a config line),
- `pause:eval` / `pause:checkpoint`: the start or end of an evaluation or a checkpoint save,
- `benign`: noise, including known look-alikes of failures (fp16 overflow skips, warnings),
- `done`: training finished normally,
- `error:<category>`: a failure line of a `FailureCategory`; `weak` error rules (a bare `Traceback`,
  `terminate called`, launcher exit codes) open a failure whose category a following specific line may set.

Matching order (first match wins): every rule in list order whose needles (lower-case literals, at least
one of which must occur in the line) are present and whose regex matches. Needles are the cheap prefilter;
`matching.RuleSet` adds a shortcut through the recently matched progress rules that keeps this answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

FIELDS: dict[str, str] = {
    "step": "current step / iteration (global, or within the epoch when total_steps is per epoch)",
    "total_steps": "total steps (or steps per epoch for per-epoch counters)",
    "epoch": "current epoch",
    "total_epochs": "total epochs",
    "loss": "training loss",
    "it_s": "iterations per second",
    "s_it": "seconds per iteration",
    "ms_it": "milliseconds per iteration",
    "samples_s": "samples per second",
    "tokens_s": "tokens per second",
    "lr": "learning rate",
    "elapsed_s": "seconds elapsed since the counter started (a running total: time_elapsed, total time (s))",
    "global_step": "a global step printed beside a per-epoch counter (Lightning's `Epoch 3, global step 1200:`)",
}
KINDS_FIXED = ("progress", "benign", "done", "pause:eval", "pause:checkpoint")
ERROR_CATEGORIES = ("oom", "nccl", "nan", "dataloader", "segfault", "node", "preempted", "user_code", "hang",
                    "other")

# Number, unambiguous (no two adjacent quantifiers over the same characters): 12, 1,234, 3.5, 4.9e-05, nan.
F = r"(?:[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF))"


def valid_kind(kind: str) -> bool:
    if kind in KINDS_FIXED:
        return True
    return kind.startswith("error:") and kind[6:] in ERROR_CATEGORIES


@dataclass
class Rule:
    name: str
    pattern: str
    kind: str
    needles: tuple[str, ...] = ()
    """Lower-case literals; the rule is tried only if one occurs in the lower-cased line. Empty: always."""
    weak: bool = False
    cause: str | None = None
    """Root-cause sentence for an error rule (`{line}` is replaced by the matched line, shortened)."""
    epoch_base: int = 0
    """First epoch number the framework prints (0 or 1), for per-epoch step counters."""
    source: str = "builtin"
    tentative: bool = False
    """An error line that says it will retry: a failure only if nothing succeeds afterwards."""
    marks_pause: bool = False
    """A progress line printed at an evaluation or checkpoint (the interval up to the next step is a pause)."""
    ignore_case: bool = False
    epoch_counter: bool = False
    """An epoch line with no total (`Epoch 12: loss 0.41`): the epoch is the counter while no step counter shows."""
    announces_start: bool = False
    """A start-of-training banner with the total (`Total optimization steps = 900`): no step is done yet."""
    regex: re.Pattern[str] = field(init=False, repr=False)
    groups: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not valid_kind(self.kind):
            raise ValueError(f"rule {self.name!r}: unknown kind {self.kind!r}")
        self.regex = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        unknown = [g for g in self.regex.groupindex if g not in FIELDS]
        if unknown:
            raise ValueError(f"rule {self.name!r}: unknown group name(s) {unknown}; allowed: {sorted(FIELDS)}")
        self.groups = tuple(self.regex.groupindex)
        self.needles = tuple(n.lower() for n in self.needles)

    @property
    def category(self) -> str | None:
        return self.kind[6:] if self.kind.startswith("error:") else None

    def values(self, m: re.Match[str]) -> dict[str, float]:
        """The matched numbers; a number too large for a float (or nan/inf) only for the loss, where nan
        and inf mean divergence (a 400-digit `step` is garbage, not a counter)."""
        out: dict[str, float] = {}
        for g, v in m.groupdict().items():
            if v is not None:
                try:
                    x = float(v)
                except ValueError:
                    try:
                        x = float(v.replace(",", ""))
                    except ValueError:
                        continue
                if math.isfinite(x) or g == "loss":
                    out[g] = x
        return out


def _p(name: str, pattern: str, needles: Iterable[str], **kw: object) -> Rule:
    return Rule(name=name, pattern=pattern, kind="progress", needles=tuple(needles), **kw)  # type: ignore[arg-type]


# `exit code 137`, `exited with code 137`, `Exit Code:    137`, `returned non-zero exit status 137`, `returncode=137`
_EXIT_STATUS = r"(?i:\bexit(?:ed)?(?: with)?(?: exit)? ?(?:code|status)|\breturn ?code)[\s:=]*"


def _e(cat: str, name: str, pattern: str, needles: Iterable[str], cause: str, **kw: object) -> Rule:
    return Rule(name=name, pattern=pattern, kind=f"error:{cat}", needles=tuple(needles), cause=cause,
                **kw)  # type: ignore[arg-type]


# any unit tqdm is given (`unit="step"`, `"img"`, `"batch"`): `3.4it/s`, `1.73s/step`, `2.09 batch/s`, `8.95img/s`;
# not the units of data work (datasets' `examples/s` and `ba/s`, bytes of a download: `10.3MB/s`)
_WHOLE = r"\d[\d,]*\d|\d"  # a whole number, with or without thousands separators
_DATA_UNIT = r"(?!(?:examples|ex|ba|[kKMGT]?i?B)/)"
_TQDM_RATE = (rf"(?:(?P<it_s>{F}) ?{_DATA_UNIT}[A-Za-z]{{0,12}}/s\b|(?P<s_it>{F})s/[A-Za-z]{{1,12}}\b"
              rf"|\? ?{_DATA_UNIT}[A-Za-z]{{0,12}}/s\b)")

# Benign look-alikes come first: they must win over the error rules.
BENIGN_RULES: list[Rule] = [
    Rule("nccl-info", r"NCCL INFO", "benign", ("nccl info",)),
    Rule("fp16-overflow-skip", r"OVERFLOW! Rank \d+ Skipping step|Gradient overflow\. +Skipping step"
         r"|loss scale overflow! Skipping step|overflow detected, skipping step", "benign",
         ("skipping step",), ignore_case=True),
    Rule("python-warning", r"\b[A-Z]\w*Warning: |^\s*warnings\.warn\(", "benign", ("warning: ", "warnings.warn")),
    Rule("torch-c10-warning", r"^\[W(?:\d{4})? ", "benign", ("[w",)),
    # the experiment tracker's own warnings and network retries (the run goes on)
    Rule("tracker-warning", r"^wandb: (?:WARNING|Network error)", "benign", ("wandb:",)),
    Rule("traceback-frame", r'^\s*File "[^"\n]*", line \d+', "benign", ('file "',)),
    # Python's report of an exception it ignored (raised in `__del__` or at interpreter exit): the traceback that
    # follows ends nothing
    Rule("exception-ignored", r"^Exception ignored in\b", "benign", ("exception ignored",)),
    # PyTorch's notes under a CUDA error (the error is the line before them)
    Rule("cuda-error-notes", r"^CUDA kernel errors might be asynchronously reported|^For debugging consider passing "
         r"CUDA_LAUNCH_BLOCKING=1|^Compile with `TORCH_USE_CUDA_DSA`", "benign",
         ("asynchronously reported", "cuda_launch_blocking", "torch_use_cuda_dsa")),
    Rule("traceback-chain", r"^(?:During handling of the above exception, another exception occurred|The above "
         r"exception was the direct cause of the following exception):$", "benign", ("above exception",)),
    # an out-of-memory event the program reports as a warning and works around (a fallback to the CPU, a retry,
    # a skipped batch): `WARNING CUDA OutOfMemoryError in the assigner, using CPU`; the run goes on
    Rule("oom-worked-around", r"(?:WARNING|[Ww]arning:)[^\n]*?(?:OutOfMemory|[Oo]ut of memory)[^\n]*?"
         r"(?:\busing (?:the )?CPU\b|\bfall(?:ing)? ?back\b|\bretrying\b|\bskipping (?:this )?batch\b)", "benign",
         ("warning",)),
    Rule("retry-succeeded", r"\b(?:succeeded|established|reconnected|connected|recovered)\b[^.]*?"
         r"\b(?:after|on) (?:\d+ )?(?:retr|attempt)", "benign", ("succeeded", "established", "connected",
                                                                "recovered"), ignore_case=True),
]

ERROR_RULES: list[Rule] = [
    # a hang the framework itself reports (before the NCCL rules: these lines also name NCCL)
    _e("hang", "watchdog-stuck", r"watchdog got stuck for \d+ seconds|without making progress|heartbeat monitor "
       r"timed out|[Nn]o progress (?:for|in) \d+", ("stuck", "progress", "heartbeat"),
       "The job stopped making progress (the framework's own hang detector): {line}", ignore_case=True),
    # node: hardware and fabric
    _e("node", "xid", r"\bXid\b[^:]*: ?(\d+)|NVRM: Xid", ("xid",), "GPU Xid error reported by the driver: {line}"),
    _e("node", "fell-off-bus", r"fallen off the bus", ("fallen off",), "A GPU has fallen off the bus: {line}"),
    _e("node", "ecc", r"(?:uncorrectable|double[- ]bit) ECC|ECC error", ("ecc",),
       "Uncorrectable ECC memory error on a GPU: {line}", ignore_case=True),
    _e("node", "nvlink", r"NVLink[^\n]*?\b(?:error|fail|down|inactive|fatal)", ("nvlink",),
       "NVLink error between GPUs: {line}", ignore_case=True),
    _e("node", "infiniband", r"(?:InfiniBand|mlx5|NET/IB|ibv_)[^\n]*?\b(?:error|fail|fatal|down)"
       r"|IBV_WC_\w+_ERR", ("infiniband", "mlx5", "net/ib", "ibv_"),
       "InfiniBand / RDMA fabric error on the node: {line}", ignore_case=True),
    _e("node", "no-device", r"no CUDA-capable device is detected|CUDA-capable device\(s\) is/are busy or unavailable"
       r"|cudaErrorDevicesUnavailable|CUDA error: (?:unknown error|system not yet initialized)",
       ("cuda-capable", "cudaerrordevicesunavailable", "cuda error: unknown", "cuda error: system"),
       "The GPU is unavailable on the node: {line}"),
    # oom
    _e("oom", "cuda-oom", r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED"
       r"|HIP out of memory|Cuda failure 'out of memory'|OOM when allocating tensor|ResourceExhaustedError"
       r"|RESOURCE_EXHAUSTED: Out of memory", ("out of memory", "outofmemory", "alloc_failed", "oom when",
                                               "resourceexhausted", "resource_exhausted"),
       "CUDA out of memory: {line}"),
    _e("oom", "host-oom", r"Out of memory: Kill(?:ed)? process|oom-kill|oom_kill|Memory cgroup out of memory"
       r"|cgroup out-of-memory|\bMemoryError\b|std::bad_alloc|[Cc]annot allocate memory",
       ("out of memory", "oom", "memoryerror", "bad_alloc", "out-of-memory", "cannot allocate memory"),
       "Host memory exhausted (out-of-memory killer): {line}"),
    _e("oom", "killed", r"^Killed$|^Killed: 9$|\btask \d+: Killed$"
       # a shell's job report: `run.sh: line 6:  3305 Killed   python train.py`, `[1]+  Killed   python train.py`
       r"|\bline \d+: +\d+ Killed(?: |$)|^\[\d+\][+-]? +Killed +\S", ("killed",),
       "The process was killed with SIGKILL, most often by the out-of-memory killer: {line}"),
    # a process's exit status read by its signal (128 + n): a shell, a container runtime or a job runner's report
    _e("oom", "exit-sigkill", rf"{_EXIT_STATUS}137\b|\bOOMKilled\b", ("137", "oomkilled"),
       "The process was killed with SIGKILL (exit status 137), most often for exceeding its memory: {line}"),
    _e("preempted", "exit-sigterm", rf"{_EXIT_STATUS}143\b|\bPod was evicted\b|\bThe node was low on resource\b",
       ("143", "evicted", "low on resource"),
       "The process was terminated (SIGTERM, exit status 143) or evicted by the scheduler: {line}"),
    _e("segfault", "exit-sigsegv", rf"{_EXIT_STATUS}139\b", ("139",),
       "The process crashed with a segmentation fault (exit status 139): {line}"),
    # dataloader (before segfault: "Bus error" here means /dev/shm)
    _e("dataloader", "worker-killed", r"DataLoader worker\b[^\n]*?\b(?:is killed by\b|exited unexpectedly)"
       r"|DataLoader timed out|Unexpected segmentation fault encountered in worker", ("dataloader", "in worker"),
       "A DataLoader worker died: {line}"),
    _e("dataloader", "shm", r"insufficient shared memory|\bBus error\b|unable to (?:write to|open) (?:file|shared "
       r"memory)[^\n]*?torch_|No space left on device[^\n]*?/dev/shm|/dev/shm[^\n]*?No space left",
       ("shared memory", "bus error", "torch_", "/dev/shm"),
       "Shared memory (/dev/shm) exhausted by DataLoader workers: {line}", ignore_case=True),
    # the file system refused a write (full disk, quota): the errno's words or number in any library's wording
    # (OSError, safetensors' `StorageFull`, a C++ `errno 28`); /dev/shm is the DataLoader's (above)
    _e("other", "storage-full", r"No space left on device|\[Errno 28\]|\bENOSPC\b|Disk quota exceeded|\[Errno 122\]"
       r"|\bEDQUOT\b|\bStorageFull\b", ("no space left", "errno 28", "enospc", "quota exceeded", "errno 122",
                                          "edquot", "storagefull"),
       "The file system is full (disk space or quota) where the job writes: {line}", ignore_case=True),
    # nccl / collective communication
    _e("nccl", "watchdog-timeout", r"Watchdog caught collective|collective operation timeout"
       r"|ProcessGroupNCCL[^\n]*?[Tt]imeout|NCCL timeout|Timed out waiting for[^\n]*?(?:collective|barrier|store)"
       r"|\[E\d*(?: [\d:.]+)? ProcessGroupNCCL\.cpp:\d+\]",
       ("timeout", "timed out", "watchdog", "processgroupnccl"),
       "A collective operation timed out (NCCL watchdog): {line}"),
    _e("nccl", "nccl-error", r"ncclSystemError|ncclInternalError|ncclRemoteError|ncclUnhandledCudaError"
       r"|ncclInvalidUsage|unhandled system error|unhandled cuda error|NCCL error|DistBackendError"
       r"|NCCL communicator was aborted|NCCL WARN[^\n]*?(?:[Ee]rror|fail|abort)",
       ("nccl", "unhandled", "distbackenderror"), "NCCL communication error: {line}"),
    _e("nccl", "connection-retry", r"(?:Connection reset by peer|Connection refused|Broken pipe|Connection closed by "
       r"peer)[^\n]*?\bretr(?:y|ying)\b", ("connection", "broken pipe"),
       "Connection to a peer lost during collective communication: {line}", tentative=True, ignore_case=True),
    _e("nccl", "connection", r"Connection reset by peer|Connection closed by peer|RendezvousTimeoutError"
       r"|RendezvousConnectionError|RendezvousClosedError|recvBytes failed|Socket Timeout|Broken pipe",
       ("connection", "rendezvous", "recvbytes", "socket timeout", "broken pipe"),
       "Connection to a peer lost during collective communication: {line}"),
    # nan
    _e("nan", "nan-line", r"loss (?:is|became|=) ?(?:nan|inf)\b|(?:\b|_)loss\w*: (?:nan|inf)\b|\bnan loss|non-finite loss"
       r"|FloatingPointError|Invalid loss, terminating training"
       r"|loss scale already at minimum|[Uu]nrecoverable (?:fp16 )?overflow|[Dd]etected (?:NaN|nan|inf|Inf) in"
       r"|Minimum loss scale reached|NaN or Inf found in input tensor", ("nan or inf", *(f"{w}{x}" for x in ("nan", "inf") for w in ("is ", "is", "became ",
                                                                                        "became", "= ", "=", ": ")),
                                        "nan loss", "non-finite", "floatingpointerror", "invalid loss", "minimum",
                                        "unrecoverable", "detected"),
       "The loss diverged (NaN/inf or unrecoverable fp16 overflow): {line}", ignore_case=True),
    # segfault
    _e("segfault", "segv", r"Segmentation fault|SIGSEGV|[Ss]ignal 11\b|exitcode\s*:\s*-11\b|Fatal Python error: "
       r"Segmentation|illegal instruction|SIGILL|^Floating point exception\b|SIGFPE", ("segmentation", "sigsegv",
                                                                                 "signal 11", "exitcode", "illegal",
                                                                                 "sigill", "floating point", "sigfpe"),
       "The process crashed with a segmentation fault: {line}"),
    # a memory fault on the GPU: a kernel read or wrote outside its memory (a crash, not running out of memory)
    _e("segfault", "device-fault", r"illegal memory access|misaligned address|unspecified launch failure"
       r"|cudaErrorIllegalAddress|hipErrorIllegalAddress", ("illegal", "misaligned", "unspecified launch"),
       "A GPU kernel faulted on memory (illegal address): {line}", ignore_case=True),
    # preemption / cancellation
    _e("other", "closing-signal", r"[Ss]ending process \d+ closing signal SIG\w+", ("closing signal",),
       "The launcher stopped the remaining workers after a failure: {line}", weak=True),
    _e("preempted", "slurm-cancel", r"CANCELLED AT [^\n]*?DUE TO (?:TIME LIMIT|PREEMPTION|NODE FAILURE)"
       r"|DUE TO TIME LIMIT|DUE TO PREEMPTION|\b(?:JOB|STEP) [\d.]+ ON \S+ CANCELLED|time limit (?:reached|exceeded)",
       ("cancelled", "time limit", "preemption"), "The scheduler cancelled or preempted the job: {line}",
       ignore_case=True),
    _e("preempted", "sigterm", r"SIGTERM|Signals\.SIGTERM|[Ss]ignal 15\b|exitcode\s*:\s*-15\b|\bpreempt(?:ed|ion)\b"
       r"|received signal to terminate|SIGUSR1|^Terminated$", ("sigterm", "signal 15", "exitcode", "preempt",
                                                              "terminat", "sigusr1"),
       "The job received a termination signal (preemption, cancellation or time limit): {line}"),
    # weak markers: a following specific line sets the category
    _e("other", "traceback", r"^Traceback \(most recent call last\)", ("traceback",),
       "A Python exception ended the run: {line}", weak=True),
    _e("other", "argparse-usage", r"^usage: \S+", ("usage:",), "Bad command-line arguments: {line}", weak=True),
    _e("other", "terminate-called", r"terminate called after throwing|Aborted \(core dumped\)|SIGABRT"
       r"|ChildFailedError|exitcode\s*:\s*-?\d+|[Ee]xit(?:ed|s) with (?:exit |return )?code(?: =)? -?[1-9]|Fatal Python error",
       ("terminate called", "aborted", "sigabrt", "childfailederror", "exitcode", "exited with", "exits with", "fatal python"),
       "The process aborted: {line}", weak=True),
    # the experiment tracker (W&B) failing: an outside service, not the training code
    _e("other", "tracker-error", r"^wandb: ERROR\b|^wandb\.errors\.[\w.]*(?:Error|Exception)\b",
       ("wandb: error", "wandb.errors."), "The experiment tracker (W&B) failed: {line}"),
    _e("other", "http-client-error", r"^(?:requests\.exceptions|urllib3\.exceptions|http\.client|aiohttp\.client_exceptions"
       r"|httpx)\.\w+: ", ("requests.exceptions.", "urllib3.exceptions.", "http.client.", "aiohttp.", "httpx."),
       "A call to an outside service failed (network): {line}"),
    # user code (after every specific category)
    _e("user_code", "argparse-error", r"^\S+\.py: error: ", (".py: error:",), "Bad command-line arguments: {line}"),
    _e("user_code", "python-exception", r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)(?::|$)",
       ("error", "exception", "interrupt"), "Python exception in the training code: {line}"),
    _e("other", "fatal", r"\b(?:FATAL|[Ff]atal error|PANIC|[Pp]anic:)", ("fatal", "panic"),
       "A fatal error ended the run: {line}", weak=True),
]

# Progress lines that are printed at an evaluation or checkpoint (before the pause rules, which they would hit)
COUNTER_PAUSE_RULES: list[Rule] = [
    # Lightning ModelCheckpoint: `Epoch 3, global step 1200: 'val_loss' reached 0.51 (best 0.51), saving model to ..`
    _p("lightning-checkpoint", r"^Epoch (?P<epoch>\d+), global step (?P<global_step>\d+): ", ("global step",),
       marks_pause=True),
]

PAUSE_RULES: list[Rule] = [
    # a tqdm bar that is not the training counter: data preparation, loading, sanity checks, tests
    Rule("side-bar", r"^\W*(?:Preparing|Loading|Downloading|Sanity Check|Tokeniz|Map|Filter|Generating|Test(?:ing)?\b"
         r"|Predict|Evaluat|Validat)[^|\n]{0,60}:\s+\d+%[|\s]", "pause:eval",
         ("preparing", "loading", "downloading", "sanity", "tokeniz", "map", "filter", "generating", "test",
          "predict", "evaluat", "validat"), ignore_case=True),
    Rule("hf-eval", r"\*\*\*\*\* Running Evaluation \*\*\*\*\*|^\{'eval_", "pause:eval", ("running evaluation",
                                                                                        "{'eval_")),
    Rule("lightning-val", r"^Validation(?: DataLoader \d+)?:|^Validating:", "pause:eval", ("validat",)),
    Rule("mm-val", r"Epoch\(val\)|Iter\(val\)", "pause:eval", ("(val)",)),
    Rule("megatron-val", r"validation loss at iteration", "pause:eval", ("validation loss",)),
    Rule("fairseq-valid", r"begin validation on|\| valid on '|valid on 'valid' subset", "pause:eval", ("valid",)),
    Rule("timm-test", r"^Test: \[", "pause:eval", ("test: [",)),
    Rule("nanogpt-eval", r"^step \d+: train loss [^,]+, val loss", "pause:eval", ("val loss",)),
    Rule("generic-eval", r"\b(?:Running|Start(?:ing)?|Begin(?:ning)?) (?:evaluation|validation)\b|\bEvaluating\b",
         "pause:eval", ("evaluat", "validation"), ignore_case=True),
    Rule("checkpoint", r"\b(?:[Ss]aving|[Ss]aved|[Ss]ave) (?:model )?(?:the )?checkpoint|[Cc]heckpoint[^\n]{0,40}? is "
         r"ready|Saving model checkpoint|[Ss]aving checkpoint|[Ss]aved checkpoint|Checkpoint saved|^Current checkpoints:"
         r"|saving model to '", "pause:checkpoint", ("checkpoint", "saving model")),
]

PROGRESS_RULES: list[Rule] = [
    # PyTorch Lightning bar: `Epoch 3:  45%|####5     | 450/1000 [02:10<02:39,  3.45it/s, v_num=1, train_loss=0.52]`
    _p("lightning-bar", rf"^Epoch (?P<epoch>\d+): +(?:\d+%\|[^|]*\| *|: )(?P<step>\d+)(?:/(?P<total_steps>\d+)|it) "
       rf"\[[^<\],]*(?:<[^,\]]*)?, +{_TQDM_RATE}(?:[^\]]*?train_loss(?:_step)?=(?P<loss>{F}))?", ("epoch",)),
    # Ultralytics YOLO: `  12/300   2.95G   0.3137   0.3809   0.7961   3   640: 45%|####  | 111/246 [01:02<01:15, 1.79it/s]`
    _p("ultralytics-bar", rf"^ *(?P<epoch>\d+)/(?P<total_epochs>\d+) +[\d.]+G [^|\n]*?: +\d+%\|[^|]*\| *(?P<step>\d+)/"
       rf"(?P<total_steps>\d+) \[[^\]]*?{_TQDM_RATE}", ("g ",), epoch_base=1),
    # the same rows under the newer drawn bar (no brackets): `  1/100   15G   3.57   8.98   0.022   109   640: 9%
    # ━─────────── 607/6848 2.7it/s 3:39<37:50`
    _p("ultralytics-line-bar", rf"^ *(?P<epoch>\d+)/(?P<total_epochs>\d+) +[\d.]+G [^\n]*?: +\d+% [━─╸╺]+ "
       rf"(?P<step>\d+)/(?P<total_steps>\d+) +{_TQDM_RATE}", ("━", "─"), epoch_base=1),
    # HF Trainer log dict
    _p("hf-dict", rf"^\{{'loss': (?P<loss>{F}),[^}}]*?'learning_rate': (?P<lr>{F}),[^}}]*?'epoch': (?P<epoch>{F})\}}",
       ("{'loss'",)),
    # tqdm bar (HF Trainer and any tqdm loop): `  3%|▎  | 120/4000 [01:02<33:10,  1.95it/s]`
    # (with the loss of its postfix: `, loss=0.41]`, `Loss=nan`, `step_loss=0.2`)
    _p("tqdm-bar", rf"(?P<step>\d+)/(?P<total_steps>\d+) \[[\d:]+<[\d:?]+, +{_TQDM_RATE}"
       rf"(?:[^\]\n]*?[ ,](?:train_|step_)?(?i:loss)=(?P<loss>{F}))?", ("<",)),
    # a drawn bar without brackets (rich-style and newer Ultralytics bars): `Training 45% ━━━━━╸────── 90/200
    # 3.1it/s 0:29<0:35` (a description naming evaluation makes it a side bar, `progress.side_label`)
    _p("line-bar", rf"\d+% [━─╸╺]+ (?P<step>\d+)/(?P<total_steps>\d+) +{_TQDM_RATE} +[\d:.]+s?<", ("━", "─")),
    # a tqdm bar cut by the terminal's width before its rate: `100%|##########| 106/106 [00:15<00:00,`
    _p("tqdm-bar-cut", r"\d+%\|[^|\n]*\| *(?P<step>\d+)/(?P<total_steps>\d+) \[[\d:]+<[\d:?]+,?$", ("%|",)),
    # Megatron-LM
    _p("megatron", rf"iteration +(?P<step>\d+)/ *(?P<total_steps>\d+) \|[^\n]*? elapsed time per iteration \(ms\): "
       rf"(?P<ms_it>{F}) \|(?:[^\n]*? learning rate: (?P<lr>{F}) \|)?(?:[^\n]*? lm loss: (?P<loss>{F}) \|)?",
       ("iteration",)),
    # DeepSpeed
    _p("deepspeed-step", rf"\[Rank \d+\] step=(?P<step>\d+), skipped=\d+, lr=\[(?P<lr>{F})", ("step=",)),
    _p("deepspeed-throughput", rf"(?:samples/sec=|RunningAvgSamplesPerSec=)(?P<samples_s>{F})",
       ("samples/sec=", "runningavgsamplespersec=")),
    # mmengine
    _p("mmengine-epoch", rf"Epoch\(train\) +\[(?P<epoch>\d+)\](?:\[ *(?P<step>\d+)/(?P<total_steps>\d+)\])?"
       rf"(?:[^\n]*? time: (?P<s_it>{F}))?(?:[^\n]*? loss: (?P<loss>{F}))?", ("epoch(train)",), epoch_base=1),
    _p("mmengine-iter", rf"Iter\(train\) +\[ *(?P<step>\d+)/(?P<total_steps>\d+)\](?:[^\n]*? time: (?P<s_it>{F}))?"
       rf"(?:[^\n]*? loss: (?P<loss>{F}))?", ("iter(train)",)),
    # fairseq, simple and json-ish formats
    _p("fairseq-bar", rf"epoch (?P<epoch>\d+) \| loss (?P<loss>{F}) \|(?:[^\n]*? \| wps (?P<tokens_s>{F}))?"
       rf"(?:[^\n]*? \| ups (?P<it_s>{F}))?[^\n]*? \| num_updates (?P<step>\d+)", ("num_updates",), epoch_base=1),
    _p("fairseq-inner", rf"epoch (?P<epoch>\d+): +\d+ / \d+ loss=(?P<loss>{F}),(?:[^\n]*? wps=(?P<tokens_s>{F}),)?"
       rf"(?:[^\n]*? ups=(?P<it_s>{F}),)?[^\n]*? num_updates=(?P<step>\d+)", ("num_updates",), epoch_base=1),
    # timm
    _p("timm", rf"^Train: (?P<epoch>\d+) \[ *(?P<step>\d+)/(?P<total_steps>\d+) \( *\d+%\)\] +Loss: +(?P<loss>{F})"
       rf"(?: \([^)]*\))? +Time: (?P<s_it>{F})s, +(?P<samples_s>{F})/s", ("train:",)),
    # nanoGPT-style prints
    _p("nanogpt", rf"^iter (?P<step>\d+): loss (?P<loss>{F}), time (?P<ms_it>{F}) ?ms", ("iter ",)),
    # torchtitan
    _p("torchtitan", rf"step: +(?P<step>\d+) +loss: +(?P<loss>{F}) +(?:grad_norm: +{F} +)?memory: +{F} ?GiB\({F}%\)"
       rf" +tps: +(?P<tokens_s>{F})", ("tps:",)),
    # configuration lines that give totals
    _p("hf-total-steps", r"^ *Total optimization steps = (?P<total_steps>[\d,]+)", ("total optimization steps",),
       announces_start=True),
    # a launcher's banner: `Total batch size = 64 | Total steps = 500`
    _p("banner-total-steps", r"\bTotal (?:training |train )?steps = (?P<total_steps>\d[\d,]*)\b", ("total",),
       announces_start=True),
    _p("hf-num-epochs", r"^ *Num Epochs = (?P<total_epochs>[\d,]+)", ("num epochs",)),
    # a total written with thousands separators is read whole (`max_steps: 6,250`, not 6)
    _p("config-max-steps", r"\b(?:max_steps|max_iters|max_update|train_iters|total_steps|training_steps)['\"]?"
       rf"(?::|=| =) ?(?P<total_steps>{_WHOLE})", ("max_", "train_iters", "total_steps", "training_steps")),
    # a total (`total steps: 6000`), but a running count beside an epoch number (`(epoch 5, total_steps 1280)`)
    _p("total-steps-text", rf"\bepoch\W{{1,3}}(?P<epoch>\d+),? total[ _]steps? (?P<step>{_WHOLE})\b|\btotal[ _](?:steps|iters"
       rf"|iterations)\b:? ?(?P<total_steps>{_WHOLE})", ("total",), ignore_case=True),
    # a run banner's count of steps, spaced like the `Num examples = ` lines around it: `  Num steps = 5468`
    _p("banner-num-steps", rf"\bNum (?:train(?:ing)? |optimization )?steps = (?P<total_steps>{_WHOLE})\b",
       ("num ",), announces_start=True),
    _p("scheduled-epochs", r"^Scheduled epochs: (?P<total_epochs>\d+)", ("scheduled epochs",)),
    _p("config-max-epochs", r"\b(?:max_epochs|num_train_epochs|max_epoch|epochs)['\"]?(?::|=| =) ?(?P<total_epochs>\d+)\b",
       ("epoch",)),
    # Keras: ` 120/512 [=====>....] - ETA: 1:02 - loss: 0.61` and `512/512 [======] - 127s 247ms/step - loss: ..`
    # (old Keras: `512/512 [======] - 49s - loss: ..`); the seconds of a finished bar are the epoch's elapsed time
    _p("keras-bar", rf"^ *(?P<step>\d+)/(?P<total_steps>\d+) \[[=>.]+\] - (?:ETA: [\d:]+|(?P<elapsed_s>\d+)s"
       rf"(?: (?:(?P<ms_it>{F})ms|(?P<s_it>{F})s)/step)?)(?: - loss: (?P<loss>{F}))?", ("/step", "eta:", "s - ", "] - ")),
    # Keras 3: ` 120/512 ━━━━━━━━━━━━ 5s 41ms/step - accuracy: 0.81 - loss: 0.52`
    _p("keras3-bar", rf"^ *(?P<step>\d+)/(?P<total_steps>\d+) [━─]+ +[\d:]+s? +(?:(?P<ms_it>{F})ms|(?P<s_it>{F})s)/step"
       rf"(?:[^\n]*? - loss: (?P<loss>{F}))?", ("/step",)),
    # torchvision-reference / DETR MetricLogger: `Epoch: [3]  [ 100/1250]  eta: 0:10:00  lr: 0.0001  loss: 1.23 (1.30)
    # ...  time: 0.5012  data: 0.0123  max mem: 1234`; PyTorch ImageNet-example ProgressMeter: `Epoch: [0][ 10/5005]
    # Time  0.512 ( 0.980)    Data ...    Loss 6.9e+00 (6.9e+00)` (its time: `tables.rate_figures`)
    _p("metric-logger", rf"^Epoch: \[(?P<epoch>\d+)(?:/(?P<total_epochs>\d+))?\] *\[ *(?P<step>\d+)/ *(?P<total_steps>\d+)\]"
       rf"(?:[^\n]*? [Ll]oss:? +(?P<loss>{F}))?(?:[^\n]*? time: (?P<s_it>{F}))?", ("epoch: [",)),
    # MNIST-example style: `Train Epoch: 3 [12800/60000 (21%)]    Loss: 0.2871`
    _p("train-epoch-samples", rf"^Train Epoch: (?P<epoch>\d+) \[ *(?P<step>\d+)/(?P<total_steps>\d+) \( *\d+%\)\]"
       rf"(?:[^\n]*? Loss: (?P<loss>{F}))?", ("train epoch:",), epoch_base=1),
    # CLU / t5x metric writers: `[1000] learning_rate=0.001, loss=2.31, timing/steps_per_second=3.2`
    _p("clu-metrics", rf"^\[(?P<step>\d+)\] [\w/.-]+=(?:[^\n]*?\bloss=(?P<loss>{F}))?", ("] ",)),
    # TensorFlow: slim `global step 1890: loss = 12.27 (0.059 sec/step)`, Estimator `loss = 0.34, step = 1200 (12.3 sec)`,
    # `global_step/sec: 8.1`
    _p("tf-slim-step", rf"\bglobal step (?P<step>\d+): loss = (?P<loss>{F}) \((?P<s_it>{F}) sec/step\)", ("global step",)),
    _p("tf-estimator-step", rf"\bloss = (?P<loss>{F}), step = (?P<step>\d+)\b", ("step = ",)),
    _p("tf-steps-per-sec", rf"\bglobal_step/sec: (?P<it_s>{F})", ("global_step/sec",)),
    # BasicSR-style: `<epoch: 30, iter:   2,800, lr:1.000e-04>`, `[epoch:  0, iter:     100, lr:(2.000e-04,)] [eta: ...,
    # time (data): 0.863 (0.003)]`
    _p("basicsr", rf"[<\[]epoch: *(?P<epoch>\d+), iter: *(?P<step>\d[\d,]*)(?:, lr: ?\(?(?P<lr>{F}))?"
       rf"(?:[^\n]*? time \(data\): (?P<s_it>{F}))?", ("iter:",)),
    # MMCV/MMEngine 1.x: `Epoch [1][100/5005]  lr: 1.000e-01, eta: 37 days, 5:46:17, time: 0.196, ...`
    _p("mmcv-epoch", rf"Epoch \[(?P<epoch>\d+)\]\[ *(?P<step>\d+)/(?P<total_steps>\d+)\](?:[^\n]*?\btime: (?P<s_it>{F}))?",
       ("epoch [",), epoch_base=1),
    # detectron2 events: `eta: 8:05:12  iter: 1259  total_loss: 1.012 ... time: 0.3322  data_time: ...`
    _p("detectron2-events", rf"\biter: (?P<step>\d+) +total_loss: (?P<loss>{F})(?:[^\n]*?\btime: (?P<s_it>{F}))?",
       ("iter:",)),
    # a counter in brackets after the epoch: `[epoch 3][100/500]`, `Epoch 3 [100/500]`, `Train: [1/100][50/500]`
    _p("epoch-bracket-counter", r"\bepoch[ :]*(?P<epoch>\d+)(?: ?/ ?(?P<total_epochs>\d+))?\]?[ ,]*\[ *(?P<step>\d+) ?/ ?"
       r"(?P<total_steps>\d+) *\]", ("epoch",), ignore_case=True),
    _p("double-bracket-counter", r"\[ *(?P<epoch>\d+) ?/ ?(?P<total_epochs>\d+) *\] ?\[ *(?P<step>\d+) ?/ ?(?P<total_steps>\d+) *\]",
       ("][", "] [")),
    # a counter with its unit: `| epoch   3 |   200/ 2983 batches | lr 20.00 | ms/batch 25.31 |`
    _p("counter-unit", r"(?:\bepoch\W{1,4}(?P<epoch>\d+)\W{1,8})?\b(?P<step>\d+) ?/ ?(?P<total_steps>\d+) "
       r"(?:batches|steps|iters|iterations)\b", ("batches", "steps", "iters", "iterations"), ignore_case=True),
    # an (epoch, batch) pair with the loss: `[1,  2000] loss: 2.186`
    _p("tuple-counter", rf"^\[ *(?P<epoch>\d+), +(?P<step>\d+)\] +loss: *(?P<loss>{F})", ("loss",)),
    # a bare counter: `iterations: 29107`, `global step 1200`
    _p("bare-counter", r"\b(?:iterations?|global[ _]step|steps? done)[ :=]+(?P<step>\d+)\s*$", ("iteration", "step"),
       ignore_case=True, weak=True),
    # where a run starts or resumes: `Start training from epoch: 12, iter: 6000`, `Resuming from step 5000`
    _p("start-counter", r"\b(?:start(?:ing)?|resum(?:e|es|ed|ing))\b[^\n]*?\b(?:iter(?:ation)?|step)[ :=]+(?P<step>\d+)\b",
       ("start", "resum"), ignore_case=True, weak=True),
    # generic custom prints: `step 120/4000 | loss 2.31 | 0.51s/it`, `Epoch 3/10`
    _p("custom-step-loss", rf"\b(?:global_step|step|iter|iteration|it|batch|update)\b[ :=#]*(?P<step>\d+)(?: ?(?:/|of) ?"
       rf"(?P<total_steps>\d+))?[ ,|;:\]][^\n]*?\b(?:train_)?loss\b[ :=]+(?P<loss>{F})", ("step", "iter", "it", "batch",
                                                                                       "update"),
       ignore_case=True),
    # a counter with its total and no loss: `Step 100/200000; acc: 10.5`, `[Epoch 3/200] [Batch 50/938] [D loss: ..]`
    _p("custom-step-total", r"\b(?:global[ _]step|step|iter|iteration|batch)\b\]?[ :=#\[]*(?P<step>\d+) ?(?:/|of) ?"
       r"(?P<total_steps>\d+)\b", ("step", "iter", "batch"), ignore_case=True),
    _p("custom-epoch", r"\bepoch[ :]*(?P<epoch>\d+) ?(?:/|of) ?(?P<total_epochs>\d+)\b", ("epoch",),
       ignore_case=True),
    # a report per range of batches: `1epoch:train:401-500batch: loss=3.2`
    _p("counter-range", r"\b\d+-(?P<step>\d+) ?(?:batch(?:es)?|iter(?:ation)?s?|steps?)\b", ("batch", "iter", "step"),
       ignore_case=True),
    # a counter without total or loss on a line that times it: `Train Iteration: 10  Time 11.1s / 10iters`
    # (a damaged line, with undecodable bytes or a loss that is no number, is no evidence for this loose reader)
    _p("counter-time", r"^(?![^\n]*(?:\ufffd|\bloss\b(?! time)[ :=]+[^\s\d.+-]))[^\n]*?\b(?:iteration|iter|step|batch)\b[ :=#]*(?P<step>\d+)\b(?! ?(?:/|of) ?\d)[^\n]*?\btime\b",
       ("time",), ignore_case=True),
    # an epoch line with metrics and no total: `Epoch 5, Time 4981.4s, Loss 0.57`, `epoch 210 best acc: 0.91`
    _p("epoch-line", r"\bepoch[ :#]*(?P<epoch>\d+)\b(?! ?(?:/|of) ?\d)(?![^\n]*\b(?:batch|step|iter|iteration|it|update)(?:_id|_idx)?\b"
       r"[ :=#]*\d)[,:;|]? (?:[^\n]*?(?:loss|acc|time|train_|\blr\b)|[a-z]\w*[ :=]+[-+]?\.?\d)",
       ("epoch",), ignore_case=True, epoch_counter=True),
]

OTHER_RULES: list[Rule] = [
    Rule("done", r"Training completed|`Trainer\.fit` stopped|\{'train_runtime': |[Tt]raining (?:is )?(?:done|finished"
         r"|complete)\b|[Ee]xiting training loop|[Dd]one training|after training is done", "done",
         ("training", "trainer.fit", "train_runtime", "exiting", "done")),
]


def builtin_rules() -> list[Rule]:
    """The built-in rule list in matching order."""
    from schedmate.logmon import shapes  # after this module: it builds on `Rule`
    from schedmate.logmon.verdict import EARLY_ERROR_RULES  # errors a benign look-alike would hide
    return [*EARLY_ERROR_RULES, *BENIGN_RULES, *ERROR_RULES, *COUNTER_PAUSE_RULES, *PAUSE_RULES, *shapes.EARLY_PROGRESS_RULES,
            *PROGRESS_RULES, *shapes.EXTRA_PROGRESS_RULES, *OTHER_RULES]


KNOWN_ERROR_LINES: tuple[str, ...] = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
    "RuntimeError: CUDA error: out of memory",
    ("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, "
    "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out."),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
    "unhandled system error, NCCL version 2.18.1"),
    ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store "
    "by key '0', but store->get('0') got error: Connection reset by peer"),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory."),
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "Fatal Python error: Segmentation fault",
    "Segmentation fault (core dumped)",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:86:00): 48, pid=2301, An uncorrectable double bit error (DBE) has been detected on GPU",
    "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "slurmstepd: error: *** JOB 123456 ON node017 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***",
    ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234.0. Some of your processes may have been killed "
    "by the cgroup out-of-memory handler."),
    "Out of memory: Killed process 4242 (python) total-vm:123456kB, anon-rss:98765kB",
    "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding.",
    "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    "ModuleNotFoundError: No module named 'flash_attn'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/data/train.jsonl'",
    "OSError: [Errno 28] No space left on device",
    "command terminated with exit code 137",
    "    Reason:       OOMKilled",
    "train.py: error: unrecognized arguments: --lr_schedule cosine",
    "WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting down workers",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "terminate called after throwing an instance of 'c10::DistBackendError'",
)
"""A corpus of real-shaped failure lines: a learned non-error rule must match none of them."""
