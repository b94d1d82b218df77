"""The small inputs of the what-if tests."""

TEXT = [
    "the quick brown fox",
    "error disk full",
    "the lazy dog",
    "warning low memory error",
    "fox and dog",
    "error error",
    "only here",
    "the end",
    "dog dog dog",
]
# the words of the error lines that no other line holds
ERROR_ONLY = [("disk", 1), ("error", 4), ("full", 1), ("low", 1), ("memory", 1), ("warning", 1)]
USERS = ["u1,alice", "u2,bob", "u3,carol", "u4,dave", "u2,bobby"]
ORDERS = ["o1,u1,10", "o2,u2,5", "o3,u1,7", "o4,u9,1", "o5,u3,2", "o6,u2,4", "o7,u1,1"]
