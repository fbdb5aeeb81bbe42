# The two glom calls Socorro's signature code makes (dotted paths with
# integer indexes, default=; assign), for running it without the glom
# package. Part of tools/socorro/run.sh, not of gobreakpad.


def glom(target, spec, default=None):
    cur = target
    for part in str(spec).split("."):
        try:
            cur = cur[int(part)] if isinstance(cur, (list, tuple)) else cur[part]
        except (KeyError, IndexError, ValueError, TypeError):
            return default
    return cur


def assign(obj, path, val, missing=dict):
    parts = path.split(".")
    cur = obj
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, missing())
    if isinstance(cur, list):
        cur[int(parts[-1])] = val
    else:
        cur[parts[-1]] = val
