"""RACE (run_race.py, `AlbertMultipleChoice`): the files read into examples, the packed rows of article, question
and option, choices on raw strings, the serving model, the job and its settings.
"""
