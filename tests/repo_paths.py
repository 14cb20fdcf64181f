"""Where the tests find the repository and the shared traces (``../shared`` beside it)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
SHARED = ROOT.parent / "shared"
SHARED_TRACES = SHARED / "traces"
SWF_LOGS = sorted((SHARED_TRACES / "swf").glob("*.swf.gz")) if SHARED.exists() else []
KTH = SHARED_TRACES / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
EURORA = SHARED_TRACES / "eurora"
TINY = ROOT / "traces" / "tiny.swf"
