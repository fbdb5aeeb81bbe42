# Signs rust-minidump JSON reports with Socorro's own signature generator
# (socorro/signature, imported from the checkout run.sh extracts) as
# Socorro's processor does (convert_to_crash_data of {"json_dump": ...}).
# Prints "JSON<TAB>SIGNATURE" per file. Part of tools/socorro/run.sh.
import json
import sys

sys.path.insert(0, sys.argv[1])
from socorro.signature.generator import SignatureGenerator  # noqa: E402
from socorro.signature.utils import convert_to_crash_data  # noqa: E402

generator = SignatureGenerator()
for path in sys.argv[2:]:
    with open(path) as f:
        report = json.load(f)
    result = generator.generate(convert_to_crash_data({"json_dump": report}))
    print(path + "\t" + result.signature)
