"""What orchestrators (the Airflow plugin, scripts) use besides the stages; no Airflow import here.

``workspace`` (the project folder and the stage calls made in it), ``params_file`` (a run's values
into params.yaml), ``versioning`` (dvc commit / push, git commits and data-version tags).
"""
