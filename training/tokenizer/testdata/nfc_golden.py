"""Writes nfc_golden.json: inputs with long runs of combining marks and their
NFC and NFKC forms by Python's unicodedata (plain UAX #15 normalization, as
Hugging Face's tokenizers apply it: no stream-safe U+034F insertion).

    python3 nfc_golden.py > nfc_golden.json
"""
import json
import random
import unicodedata

rng = random.Random(29)
starters = ["e", "a", "A", "o", "u", "\u00e9", "x", "\u03b1", "\u0438", "\ufb01", "1", " "]
marks = ["\u0301", "\u0300", "\u0308", "\u0302", "\u0316", "\u0323", "\u031b", "\u0327", "\u0328", "\u0345", "\u05b0", "\u0651", "\u093c", "\u3099"]
inputs = [
    "e" + "\u0301" * 31,
    "e" + "\u0301" * 100,
    "a" + "\u0316\u0301" * 20,
    "x" + "\u0301" * 35 + "y" + "\u0308" * 31 + "z",
    "\u00e9" + "\u0301" * 31,
    "A" + "\u0323\u0302" * 16,
    "o" + "\u031b" + "\u0301" * 31,
    "\u0301" * 40,
    "word " + "e" + "\u0301" * 33 + " tail",
]
for _ in range(150):
    s = ""
    for _ in range(rng.randint(1, 3)):
        s += rng.choice(starters) + "".join(rng.choice(marks) for _ in range(rng.randint(0, 45)))
    inputs.append(s)
print(json.dumps([{"input": s, "nfc": unicodedata.normalize("NFC", s), "nfkc": unicodedata.normalize("NFKC", s)} for s in inputs], ensure_ascii=True, indent=0))
