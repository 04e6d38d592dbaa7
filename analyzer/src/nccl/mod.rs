//! NCCL settings against the wire (`--nccl-env FILE`; docs/verdicts.md "NCCL settings
//! against the wire"): a job's `NCCL_IB_*` environment ([`mod@env`]) set beside what a finished
//! [`Report`](crate::report::Report) saw ([`check()`]), one verdict per variable: it matches
//! the wire, it does not (with the value that would), or the capture cannot tell (and why).
//!
//! The facts each rule rests on (what a variable sets, its default by NCCL version, how it
//! reaches the wire on mlx5) were read from NVIDIA/nccl (`src/transport/net_ib.cc` before
//! 2.29, `src/transport/net_ib/` after; `NCCL_PARAM` defaults at every release tag), its
//! environment documentation (`docs/userguide/source/env.rst`, published at
//! <https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html>) and the mlx5 driver
//! (`drivers/infiniband/hw/mlx5/qp.c`, `mlx5_set_path()`); each rule cites its own.

pub mod check;
pub mod env;
mod rules;

pub use check::{attach, check, check_flows, NcclCheck, VarCheck, Verdict};
pub use env::{parse, parse_as, EnvError, EnvVar, FileKind, NcclEnv, NcclVersion};
