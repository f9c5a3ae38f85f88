#!/usr/bin/env python3
"""Writes scikit-learn's copy of the Wisconsin Diagnostic Breast Cancer data (UCI, CC BY 4.0:
W. Wolberg, O. Mangasarian, N. Street, W. Street, 1993) to data/breast-cancer.csv: 569 rows of
30 features and the label (1 = benign, 0 = malignant, scikit-learn's coding), for the GBDT
training of the `mm` family. Run once with scikit-learn installed; the CSV is in the repo.
"""
import csv
import pathlib

from sklearn.datasets import load_breast_cancer

data = load_breast_cancer()
out = pathlib.Path(__file__).resolve().parent.parent / "data" / "breast-cancer.csv"
with out.open("w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow([n.replace(" ", "_") for n in data.feature_names] + ["label"])
    for row, label in zip(data.data, data.target):
        w.writerow([repr(float(v)) for v in row] + [int(label)])
print(f"wrote {out} ({len(data.target)} rows)")
