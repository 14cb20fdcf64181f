"""Memory layout of the engine state: column and slot indices shared by every kernel.

Kept in one module so that the engine, the schedulers, the allocators and the predictors
index the same arrays the same way.
"""

import numpy as np

N_RES = 4  # resource types: cores, GPUs, MICs, memory (MiB)

# Columns of State.jobs, int64 (n_jobs, N_JCOLS); times in s, memory in MiB.
J_SUBMIT = 0
J_RUN = 1  # actual duration
J_EST = 2  # user's estimate (> 0)
J_UNITS = 3
J_REQ = 4  # J_REQ + k: per-unit request of resource k (cores, GPUs, MICs, MiB)
J_REQ_NODES = 8  # -1: free spread; > 0: exactly that many nodes of units/req_nodes units
J_PRED = 9  # duration the scheduler believes, fixed at submission
J_START = 10
J_END = 11
J_STATE = 12  # JobState
J_NODES = 13  # nodes used
J_RUN_KEY = 14  # start + pred, the running-set order
J_PTR = 15  # allocation segment in State.pool
J_LEN = 16
J_USER = 17
J_QUEUE = 18
J_PKEY = 19  # J_PKEY + i, i < 4: keys an online predictor precomputes (profile ids, ...)
J_QWAIT = 23  # expected wait of the job's queue (s, >= 1): PRB's yardstick
N_JCOLS = 24

# Columns of State.run_list, int64 (n, N_RCOLS): one row per running job, rows sorted by
# (key, job) so that reservations walk a contiguous array.
R_KEY = 0  # start + pred
R_JOB = 1
N_RCOLS = 2

# Entries of State.scal, int64 (N_SCAL,).
V_QN = 0  # jobs in the queue
V_QH = 1  # queue head offset in State.queue
V_QSPAN = 2  # queue entries from the head, holes (started jobs) included
V_RN = 3  # running jobs
V_NEXT = 4  # next job index to arrive
V_HN = 5  # heap size
V_SEQ = 6  # event sequence counter
V_POOL = 7  # allocation pool fill
V_TL = 8  # timeline rows
V_LAST_PASS = 9  # time of the last pass (-1: none)
V_PERIOD = 10  # decision period in s (0: decide at every event instant)
V_TICK0 = 11  # origin of the decision period
V_PASSES = 12
V_STARTED = 13
V_PRED_KIND = 14  # schedbench.predictors.Predictor
V_SJF = 15  # 1: the queue is kept in (pred, submit, id) order
V_FREE = 16  # V_FREE + k: free amount of resource k over all nodes
V_CAP = 20  # V_CAP + k: capacity of resource k over all nodes
V_SHADOW = 24  # V_SHADOW + k: scratch totals for reservations
V_HINT = 28  # V_HINT + k: no node below this index has any free resource k
V_WSUM = 32  # V_WSUM + k: sum over queued jobs of pred * units * request of k (Weighted)
V_WPRED = 36  # sum over queued jobs of pred (Weighted)
V_PRIO = 37  # V_PRIO + k: Priority-Weighted's priority of resource k (1 .. V_PBOUND)
V_CRIT = 41  # V_CRIT + k: 1 when resource k is critical (Balanced, Priority-Weighted)
V_PBOUND = 45  # Priority-Weighted's bound on priorities
V_TMP = 46  # V_TMP + i, i < 16: scratch for kernels that need a few counters
V_EASY_VALID = 62  # 1 while nothing ended or started since the last EASY pass ended
V_EASY_HEAD = 63  # that pass's head, shadow time, final extra, and first unscanned index
V_EASY_SHADOW = 64
V_EASY_EXTRA = 65
V_EASY_NEXT = 66
N_SCAL = 67

# Rows of State.work, int64 (N_WORK, n_nodes): node buffers.
W_ORDER = 0
W_IDENT = 1
W_NODE = 2
W_COUNT = 3
W_NODE2 = 4
W_COUNT2 = 5
W_TMP = 6
N_WORK = 7

# Rows of State.timeline, int64 (7, capacity): time, queue, running, used cores, GPUs,
# MICs, MiB.
N_TL = 3 + N_RES
INF = np.iinfo(np.int64).max
