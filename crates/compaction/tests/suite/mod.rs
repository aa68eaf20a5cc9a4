mod auto;
mod harness;
mod manual;
mod micro;
mod prompt_kept;
mod reactive;
