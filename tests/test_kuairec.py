"""KuaiRec stream on a tiny file set written here with KuaiRec 2.0's exact column names."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from okl.data.kuairec import FILES, KuaiRecStream, find_kuairec_dir, load_kuairec
from okl.data.readers import DataFormatError

SMALL_MATRIX_COLUMNS = ["user_id", "video_id", "play_duration", "video_duration", "time", "date", "timestamp",
                        "watch_ratio"]
USER_COLUMNS = (["user_id", "user_active_degree", "is_lowactive_period", "is_live_streamer", "is_video_author",
                 "follow_user_num", "follow_user_num_range", "fans_user_num", "fans_user_num_range",
                 "friend_user_num", "friend_user_num_range", "register_days", "register_days_range"]
                + [f"onehot_feat{i}" for i in range(18)])
DAILY_COLUMNS = ("video_id,date,author_id,video_type,upload_dt,upload_type,visible_status,video_duration,"
                 "video_width,video_height,music_id,video_tag_id,video_tag_name,show_cnt,show_user_num,play_cnt,"
                 "play_user_num,play_duration,complete_play_cnt,complete_play_user_num,valid_play_cnt,"
                 "valid_play_user_num,long_time_play_cnt,long_time_play_user_num,short_time_play_cnt,"
                 "short_time_play_user_num,play_progress,comment_stay_duration,like_cnt,like_user_num,"
                 "click_like_cnt,double_click_cnt,cancel_like_cnt,cancel_like_user_num,comment_cnt,"
                 "comment_user_num,direct_comment_cnt,reply_comment_cnt,delete_comment_cnt,"
                 "delete_comment_user_num,comment_like_cnt,comment_like_user_num,follow_cnt,follow_user_num,"
                 "cancel_follow_cnt,cancel_follow_user_num,share_cnt,share_user_num,download_cnt,"
                 "download_user_num,report_cnt,report_user_num,reduce_similar_cnt,reduce_similar_user_num,"
                 "collect_cnt,collect_user_num,cancel_collect_cnt,cancel_collect_user_num,"
                 "direct_comment_user_num,reply_comment_user_num,share_all_cnt,share_all_user_num,"
                 "outsite_share_all_cnt").split(",")
DEGREES = ["full_active", "high_active", "middle_active", "UNKNOWN"]
RANGES = ["0", "(0,10]", "(10,50]", "500+"]
DATES = [20200705, 20200706, 20200707]


def write_kuairec(directory, n_users=6, n_videos=5, n_rows=40, seed=0, sorted_log=False):
    """Write the four files; return the rows of small_matrix (as dicts) for independent checks."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    users = []
    with open(directory / "user_features.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(USER_COLUMNS)
        for u in range(n_users):
            row = {c: "0" for c in USER_COLUMNS}
            row.update(user_id=str(u), user_active_degree=DEGREES[u % 4], is_lowactive_period=str(u % 2),
                       is_live_streamer="0", is_video_author=str((u // 2) % 2),
                       follow_user_num_range=RANGES[u % 4], fans_user_num_range=RANGES[(u + 1) % 4],
                       friend_user_num_range=RANGES[(u + 2) % 4], register_days_range=f"{30 * (u % 3)}-{30 * (u % 3) + 29}")
            for i in range(18):
                row[f"onehot_feat{i}"] = str(int(rng.integers(0, 3)))
            row["onehot_feat12"] = "" if u == 1 else f"{u % 2}.0"  # a missing value (pandas: NaN)
            users.append(row)
            w.writerow([row[c] for c in USER_COLUMNS])
    tags = {v: sorted(set(int(t) for t in rng.integers(0, 4, size=1 + v % 2))) for v in range(n_videos)}
    with open(directory / "item_categories.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["video_id", "feat"])
        for v in range(n_videos):
            w.writerow([v, "[" + ", ".join(str(t) for t in tags[v]) + "]"])
    daily = {}
    with open(directory / "item_daily_features.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(DAILY_COLUMNS)
        for v in range(n_videos):
            for d in DATES[:2]:  # no statistics on the last date: features 0
                row = {c: str(int(rng.integers(0, 50))) for c in DAILY_COLUMNS}
                row.update(video_id=str(v), date=str(d), video_tag_name="标签, 带逗号",
                           play_progress=f"{rng.random():.6f}")
                if v == 0 and d == DATES[0]:
                    row["play_user_num"] = "0"  # division by zero: features 0
                daily[(v, d)] = row
                w.writerow([row[c] for c in DAILY_COLUMNS])
    rows = []
    for i in range(n_rows):
        ts = 1593800000.0 + float(rng.integers(0, 30)) * 1000.0 + (0.5 if i % 7 == 0 else 0.0)
        rows.append(dict(user_id=str(int(rng.integers(0, n_users))), video_id=str(int(rng.integers(0, n_videos))),
                         play_duration="1000", video_duration="2000", time="2020-07-05 05:27:48.378",
                         date=f"{DATES[int(rng.integers(0, 3))]}.0", timestamp=repr(ts),
                         watch_ratio=f"{rng.random() * 1.5:.6f}"))
    rows[3]["timestamp"] = ""  # incomplete rows are dropped
    rows[5]["watch_ratio"] = ""
    rows[8]["watch_ratio"] = "0.75"  # not > 0.75: -1
    if sorted_log:
        rows = [r for r in rows if r["timestamp"]]
        rows.sort(key=lambda r: float(r["timestamp"]))
    with open(directory / "small_matrix.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SMALL_MATRIX_COLUMNS)
        for r in rows:
            w.writerow([r[c] for c in SMALL_MATRIX_COLUMNS])
    return rows, users, tags, daily


def expected_stream(rows, users, tags, daily):
    """Labels and features computed directly from the written rows (the spec, independently)."""
    kept = [(i, r) for i, r in enumerate(rows) if all(r[c] != "" for c in ("user_id", "video_id", "timestamp",
                                                                          "watch_ratio", "date"))]
    kept.sort(key=lambda ir: (float(ir[1]["timestamp"]), ir[0]))  # stable: ties keep file order
    one_hot_cols = ["user_active_degree", "follow_user_num_range", "fans_user_num_range", "friend_user_num_range",
                    "register_days_range"] + [f"onehot_feat{i}" for i in (0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 13,
                                                                          14, 15, 16, 17)]
    cats = {}
    for c in one_hot_cols:
        vals = {u[c] for u in users if u[c] != ""}
        try:
            cats[c] = sorted(vals, key=float)
        except ValueError:
            cats[c] = sorted(vals)
    all_tags = sorted({t for ts in tags.values() for t in ts})
    X, y = [], []
    for _, r in kept:
        u = users[int(r["user_id"])]
        feat = [float(u[c]) for c in ("is_lowactive_period", "is_live_streamer", "is_video_author")]
        for c in one_hot_cols:
            feat += [1.0 if u[c] == v else 0.0 for v in cats[c]]
        v = int(r["video_id"])
        feat += [float(tags[v].count(t)) for t in all_tags]
        d = daily.get((v, int(float(r["date"]))))
        if d is None:
            feat += [0.0] * 6
        else:
            play = float(d["play_user_num"])
            feat.append(float(d["play_progress"]))
            for c in ("like_user_num", "share_user_num", "comment_user_num", "follow_user_num",
                      "reduce_similar_user_num"):
                feat.append(float(d[c]) / play if play else 0.0)
        X.append(feat)
        y.append(1.0 if float(r["watch_ratio"]) > 0.75 else -1.0)
    return np.array(X), np.array(y)


def test_labels_features_and_order_match_the_definition(tmp_path):
    rows, users, tags, daily = write_kuairec(tmp_path / "kr", n_rows=60)
    X_expected, y_expected = expected_stream(rows, users, tags, daily)
    stream = KuaiRecStream(tmp_path / "kr", chunk_rows=7, block_rows=11)
    assert stream.n_rows == 58 == len(y_expected)  # two incomplete rows dropped
    blocks = list(stream.blocks())
    assert [len(b[1]) for b in blocks] == [11, 11, 11, 11, 11, 3]
    X = np.vstack([b[0] for b in blocks])
    y = np.concatenate([b[1] for b in blocks])
    assert X.shape == X_expected.shape
    np.testing.assert_array_equal(y, y_expected)
    np.testing.assert_allclose(X, X_expected, rtol=0, atol=1e-12)
    assert len(stream.feature_names) == X.shape[1]
    # streamed in chunks, never the whole file: 60 data lines in chunks of at most 7
    assert stream.stats["chunks"] == math.ceil(60 / 7) and stream.stats["largest_chunk"] == 7
    # the first max_rows rows of the same order
    Xp, yp = stream.load(max_rows=20)
    np.testing.assert_array_equal(yp, y_expected[:20])
    np.testing.assert_allclose(Xp, X_expected[:20], atol=1e-12)


def test_file_order_streams_a_sorted_file_and_rejects_an_unsorted_one(tmp_path):
    rows, users, tags, daily = write_kuairec(tmp_path / "sorted", n_rows=50, sorted_log=True)
    X_expected, y_expected = expected_stream(rows, users, tags, daily)
    stream = KuaiRecStream(tmp_path / "sorted", chunk_rows=6, order="file")
    X, y = stream.load()
    np.testing.assert_array_equal(y, y_expected)
    np.testing.assert_allclose(X, X_expected, atol=1e-12)
    assert stream.stats["largest_chunk"] <= 6
    write_kuairec(tmp_path / "unsorted", n_rows=50)
    with pytest.raises(DataFormatError, match="not in timestamp order"):
        KuaiRecStream(tmp_path / "unsorted", chunk_rows=6, order="file").load()


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="small_matrix.csv"):
        find_kuairec_dir(tmp_path / "nothing")
    write_kuairec(tmp_path / "KuaiRec" / "data", n_rows=10)
    assert find_kuairec_dir(tmp_path) == tmp_path / "KuaiRec" / "data"
    (tmp_path / "KuaiRec" / "data" / "item_categories.csv").unlink()
    with pytest.raises(FileNotFoundError, match="lacks item_categories.csv"):
        find_kuairec_dir(tmp_path)
    assert set(FILES) >= {"item_categories.csv"}


def test_load_kuairec_from_a_data_dir(tmp_path):
    rows, users, tags, daily = write_kuairec(tmp_path / "kuairec", n_rows=30, seed=3)
    X, y = load_kuairec(tmp_path, max_rows=12)
    X_expected, y_expected = expected_stream(rows, users, tags, daily)
    np.testing.assert_array_equal(y, y_expected[:12])
    np.testing.assert_allclose(X, X_expected[:12], atol=1e-12)
