mod auto;
mod harness;
mod manual;
mod micro;
mod reactive;
