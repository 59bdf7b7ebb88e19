"""Quiet TensorFlow's C++ logging before any module here imports it."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
