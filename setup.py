"""Install meta_policy_search with every sub-package (the original's setup.py missed some)."""

from pathlib import Path

from setuptools import find_packages, setup

README = Path(__file__).with_name("README.md")

setup(
    name="meta_policy_search",
    version="0.1.0",
    description="Gradient-based meta-reinforcement learning: ProMP, MAML, E-MAML and DiCE in TF2",
    long_description=README.read_text(encoding="utf-8") if README.exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["meta_policy_search", "meta_policy_search.*"]),
    # The paper's settings and curve values (meta_policy_search.experiment.paper reads them).
    package_data={"meta_policy_search": ["data/*.json", "data/*.csv"]},
    install_requires=[
        "tensorflow>=2.16,<3",
        "numpy>=1.26",
        "gymnasium[mujoco]>=1.0",
        "mujoco>=3.1",
        "joblib",
        "matplotlib",
    ],
    extras_require={
        "test": ["pytest"],
        "docs": ["sphinx", "furo", "sphinx-mathjax-offline"],
        "ray": ["ray"],
        # metaworld 3.1.1 pins mujoco 3.3.0 (its envs fail on mujoco 4); see requirements-metaworld.txt.
        "metaworld": ["metaworld==3.1.1", "mujoco==3.3.0", "packaging"],
    },
)
