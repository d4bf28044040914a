mod h;
mod i;
